/**
 * Puts an image of this host's Docker engine into a kind cluster's nodes (`kind load docker-image`), for a cluster
 * that runs what no registry serves: the engine's own image in a landscape's platform cluster.
 */
import { execFile } from "node:child_process";
import { stderrSummary } from "./stderr.ts";

/** Loads `image` into every node of the kind cluster `clusterName`; rejects with kind's last stderr lines. */
export function loadImageIntoKindCluster(
  tools: { readonly kind: string; readonly docker?: string },
  clusterName: string,
  image: string,
  timeoutMs = 300_000,
): Promise<void> {
  // kind finds Docker on PATH: put the toolchain's first.
  const dockerFolder = tools.docker?.includes("/") ? tools.docker.replace(/\/[^/]*$/, "") : undefined;
  const env = dockerFolder
    ? { ...process.env, PATH: `${dockerFolder}:${process.env.PATH ?? ""}` }
    : process.env;
  return new Promise((resolvePromise, reject) => {
    execFile(
      tools.kind,
      ["load", "docker-image", image, "--name", clusterName],
      { encoding: "utf8", timeout: timeoutMs, env },
      (error, _stdout, stderr) =>
        error
          ? reject(
              new Error(
                `kind load docker-image ${image} --name ${clusterName} failed: ${stderrSummary(stderr, 3) || error.message}`,
              ),
            )
          : resolvePromise(),
    );
  });
}
