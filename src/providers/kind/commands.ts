/** The thin shell around the kind and Docker CLIs: each call runs one command and says how it failed. */
import { execFile } from "node:child_process";
import { parse } from "yaml";
import type { SupportedVersion } from "../../api/cluster-profile.ts";
import type { Logger } from "../../api/logger.ts";
import { pollUntil } from "../../util/poll-until.ts";
import { dockerRunner } from "../shared/docker-cli.ts";
import { nodeOf } from "./authn-volume.ts";
import { localNodeImageVersions, newestMinorKindCreates } from "./cluster-config.ts";
import { stderrSummary } from "./stderr.ts";

/** A kind command failed; the message carries its exit status and last stderr lines (never its stdout). */
export class KindCommandError extends Error {
  override readonly name = "KindCommandError";
}

/** The kind CLI (and the Docker CLI it runs beside, when given). */
export class KindCli {
  readonly kind: string;
  readonly docker: string | undefined;
  readonly #timeoutMs: number;

  /** `newestMinor`: what `kind version` said, when already asked (see {@link newestMinor}). */
  constructor(
    kind: string,
    docker: string | undefined,
    timeoutMs: number,
    newestMinor?: Promise<number | undefined>,
  ) {
    this.kind = kind;
    this.docker = docker;
    this.#timeoutMs = timeoutMs;
    this.#newestMinor = newestMinor;
  }

  #newestMinor: Promise<number | undefined> | undefined;

  /** The newest Kubernetes minor this kind can create, from `kind version` (asked once); undefined: no limit known. */
  newestMinor(): Promise<number | undefined> {
    this.#newestMinor ??= this.run(["version"]).then(newestMinorKindCreates, () => undefined);
    return this.#newestMinor;
  }

  /** Runs kind and returns its stdout; a failure throws {@link KindCommandError} quoting stderr only. */
  run(args: readonly string[]): Promise<string> {
    return new Promise((resolvePromise, reject) => {
      execFile(
        this.kind,
        [...args],
        { encoding: "utf8", timeout: this.#timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) return resolvePromise(stdout);
          const status =
            typeof error.code === "number"
              ? `exit ${error.code}`
              : error.signal
                ? `killed by ${error.signal}`
                : String(error.code ?? "failed to start");
          const detail = stderrSummary(stderr, 3);
          reject(
            new KindCommandError(`kind ${args.join(" ")} failed (${status})${detail ? `: ${detail}` : ""}`),
          );
        },
      );
    });
  }

  async listClusters(): Promise<string[]> {
    const out = await this.run(["get", "clusters"]);
    return out
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("No kind clusters"));
  }

  /** The admin kubeconfig of `cluster`; `internal`: naming the node's address on the Docker network. */
  kubeconfig(cluster: string, internal: boolean): Promise<string> {
    return this.run(["get", "kubeconfig", "--name", cluster, ...(internal ? ["--internal"] : [])]);
  }

  /** The API server URL the kubeconfig of `cluster` names. */
  async server(cluster: string, internal: boolean): Promise<string> {
    const kubeconfig = await this.kubeconfig(cluster, internal);
    let server: string | undefined;
    try {
      server = kubeconfigServer(kubeconfig);
    } catch {
      server = undefined;
    }
    if (!server)
      throw new Error(`kind get kubeconfig ${internal ? "--internal " : ""}for ${cluster} names no server`);
    return server;
  }

  /** `kind delete cluster` (see {@link deleteKindCluster}); kind edits `kubeconfigPath`, never ~/.kube/config. */
  delete(cluster: string, kubeconfigPath: string): Promise<void> {
    return deleteKindCluster((args) => this.run(args), cluster, kubeconfigPath);
  }

  /**
   * The cluster's node containers that do not run, each as `<name> (<state>)` (e.g. stopped by hand, or by a
   * reboot of the Docker host); none when Docker is not given to the backend or cannot be asked (kind's own
   * calls, which go through Docker too, tell that failure).
   */
  async stoppedNodes(cluster: string): Promise<string[]> {
    const nodes = await this.nodeStates(cluster).catch(() => []);
    return nodes.filter((node) => node.state !== "running").map((node) => `${node.name} (${node.state})`);
  }

  /** The cluster's node containers with their states (`running`, `exited`, …); none without Docker. */
  async nodeStates(cluster: string): Promise<Array<{ readonly name: string; readonly state: string }>> {
    if (!this.docker) return [];
    const listed = await dockerOutput(this.docker, [
      "ps",
      "--all",
      "--filter",
      `label=io.x-k8s.kind.cluster=${cluster}`,
      "--format",
      "{{.Names}} {{.State}}",
    ]);
    return listed
      .split("\n")
      .map((line) => line.trim().split(" "))
      .filter(([name]) => name)
      .map(([name, state]) => ({ name: name as string, state: state ?? "unknown" }));
  }

  /** `docker stop` (or `start`) of every node container of the cluster (hibernation, contract 1.6). */
  async stopOrStartNodes(cluster: string, verb: "stop" | "start"): Promise<void> {
    const docker = this.#requireDocker(`${verb} the nodes of ${cluster}`);
    const nodes = (await this.nodeStates(cluster)).map((node) => node.name);
    if (nodes.length === 0) throw new Error(`kind cluster ${cluster} has no node containers`);
    await dockerRunner(docker, this.#timeoutMs)([verb, ...nodes]);
  }

  /** Whether the API server of the cluster answers `/readyz` inside its control-plane node. */
  async apiServerReady(cluster: string): Promise<boolean> {
    const docker = this.#requireDocker(`ask the API server of ${cluster}`);
    const args = ["exec", nodeOf(cluster), "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"];
    return dockerOutput(docker, [...args, "get", "--raw", "/readyz"]).then(
      (out) => out.trim() === "ok",
      () => false,
    );
  }

  #requireDocker(what: string): string {
    if (!this.docker)
      throw new Error(`kind backend: cannot ${what} without the Docker CLI (the docker option)`);
    return this.docker;
  }

  /** The image of the cluster's control-plane node container (e.g. kindest/node:v1.36.3); "" when unknown. */
  async nodeImage(cluster: string): Promise<string> {
    if (!this.docker) return "";
    return (
      await dockerOutput(this.docker, ["inspect", "--format", "{{.Config.Image}}", nodeOf(cluster)]).catch(
        () => "",
      )
    ).trim();
  }
}

/**
 * `kind delete cluster` with `run` (kind's arguments), run again every 5 s for up to a minute while it fails:
 * Docker gives a node about 12 s to exit after its kill, then fails `docker rm -f` with "did not receive an exit
 * event", and a node on a busy host can take longer (20–24 s seen in full test runs). kind's delete is
 * idempotent, so running it again until the nodes are gone is safe.
 */
export function deleteKindCluster(
  run: (args: readonly string[]) => Promise<unknown>,
  name: string,
  kubeconfigPath: string,
): Promise<void> {
  return pollUntil(
    `kind cluster ${name} deleted`,
    async () => {
      await run(["delete", "cluster", "--name", name, "--kubeconfig", kubeconfigPath]);
      return { done: true, value: undefined };
    },
    { timeoutMs: 60_000, intervalMs: 5_000 },
  );
}

/** The server URL of a kubeconfig's current context (or of its only cluster); undefined if there is none. */
export function kubeconfigServer(text: string): string | undefined {
  const config = parse(text) as {
    "current-context"?: string;
    contexts?: Array<{ name?: string; context?: { cluster?: string } }>;
    clusters?: Array<{ name?: string; cluster?: { server?: string } }>;
  } | null;
  const clusters = config?.clusters ?? [];
  const current = config?.contexts?.find((c) => c.name === config["current-context"])?.context?.cluster;
  const cluster =
    clusters.find((c) => c.name === current) ?? (clusters.length === 1 ? clusters[0] : undefined);
  const server = cluster?.cluster?.server;
  return typeof server === "string" && server !== "" ? server : undefined;
}

/**
 * The node image versions the Docker engine holds (up to `newestMinor`, the newest kind can create); none (with a
 * warning) when Docker cannot be asked.
 */
export async function listLocalNodeImages(
  docker: string,
  log: Logger,
  newestMinor?: number,
): Promise<SupportedVersion[]> {
  try {
    const versions = await listNodeImages(docker, newestMinor);
    log.info("kind node images at hand", { versions: versions.map((v) => v.version) });
    return versions;
  } catch (error) {
    log.warn("could not list the kindest/node images", { docker, error: (error as Error).message });
    return [];
  }
}

/** The node image versions the Docker engine holds; rejects saying why Docker could not be asked. */
export async function listNodeImages(docker: string, newestMinor?: number): Promise<SupportedVersion[]> {
  try {
    return localNodeImageVersions(
      await dockerOutput(docker, ["image", "ls", "--format", "{{.Repository}}:{{.Tag}}", "kindest/node"]),
      newestMinor,
    );
  } catch (error) {
    throw new Error(
      `kind backend: cannot list the kindest/node images (${docker} image ls: ${(error as Error).message}); make the Docker socket usable by the engine, or list the versions in spec.supportedVersions`,
    );
  }
}

/** A Docker CLI command's stdout; rejects with its last stderr lines (or how it failed). */
export const dockerOutput = (docker: string, args: readonly string[]): Promise<string> =>
  dockerRunner(docker, 30_000)(args);
