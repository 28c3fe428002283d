/**
 * `up --backend kind`: the kind CLI, a Docker engine and a node image, brought up by the project's own
 * container toolchain (`hack/containers/ensure.sh`, cached per machine), unless `--backend-option kind=…`
 * names a kind of the user's own.
 */
import { execFileSync } from "node:child_process";
import { checkoutFile } from "./from-checkout.ts";

/** The backend options that point the kind backend at the toolchain's kind and Docker CLI. */
export function kindBackendOptions(
  given: Readonly<Record<string, string>>,
  log: (message: string) => void,
): Record<string, string> {
  if (given.kind !== undefined) return { ...given };
  log(
    "kind backend: making sure of a Docker engine, kind and the kind node image (hack/containers/ensure.sh)",
  );
  const values = ensure("the kind backend without --backend-option kind=<path>", [
    "docker",
    "kind",
    "kind-node-image",
  ]);
  const kind = values.get("kind");
  const docker = values.get("docker");
  if (!kind || !docker) throw new Error("hack/containers/ensure.sh named no kind or docker");
  log(`kind backend: ${kind}, node image ${values.get("nodeImage") ?? "?"}`);
  return { kind, docker, ...given };
}

/** The engine's image built from this checkout (`hack/containers/ensure.sh engine-image`, cached by its sources' hash). */
export function engineImageFromCheckout(log: (message: string) => void): string {
  log("the engine's image: building it from this checkout unless built before (hack/containers/ensure.sh)");
  const image = ensure("building the engine's image (no --image)", ["docker", "engine-image"]).get(
    "engineImage",
  );
  if (!image) throw new Error("hack/containers/ensure.sh named no engine image");
  return image;
}

/** Runs the toolchain's steps for `purpose`; what they print as `key=value` lines (their progress goes to stderr). */
function ensure(purpose: string, steps: readonly string[]): Map<string, string> {
  const out = execFileSync(checkoutFile("hack/containers/ensure.sh", purpose), steps, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Map(
    out
      .split("\n")
      .map((line) => line.split("=", 2) as [string, string])
      .filter(([key, value]) => key !== "" && value !== undefined),
  );
}
