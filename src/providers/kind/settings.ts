/** The kind backend's settings: its options, and how the `--backend-option`s become them. */
import { availableParallelism } from "node:os";
import { isAbsolute, resolve } from "node:path";
import type { Clock } from "../../api/clock.ts";
import type { SupportedVersion } from "../../api/cluster-profile.ts";
import type { Logger } from "../../api/logger.ts";
import { isExecutable, onPath } from "../../util/executables.ts";
import type { MetallbImages } from "./metallb.ts";

/**
 * Versions offered when a ProviderConfig lists none and the Docker engine holds no `kindest/node` image:
 * the node images published with kind v0.30.0 (`kindest/node:v1.34.0`, `v1.33.4`, `v1.32.8`), which kind
 * pulls from its registry. Other kind releases publish other patch versions; list yours in the
 * ProviderConfig, and map them to images with `settings.images` if needed.
 */
export const KIND_DEFAULT_VERSIONS: readonly SupportedVersion[] = [
  { version: "1.34.0" },
  { version: "1.33.4" },
  { version: "1.32.8" },
];

/** Knobs of the kind backend. */
export interface KindBackendOptions {
  /** The kind executable (a path, as resolved by {@link findExecutable}). */
  readonly kind: string;
  /** Folder for the per-cluster records, create logs and kubeconfig files. */
  readonly stateDirectory: string;
  /** `--wait` given to `kind create cluster`: how long kind waits for the control plane. Default 5 min. */
  readonly waitMs?: number;
  /** Time limit of the short kind commands (`get`, `delete`). Default 5 min. */
  readonly commandTimeoutMs?: number;
  /**
   * Versions offered when a ProviderConfig lists none: those of the `kindest/node:v<version>` images the
   * Docker engine holds (see {@link localNodeImageVersions}); empty or absent: {@link KIND_DEFAULT_VERSIONS}.
   */
  readonly localVersions?: readonly SupportedVersion[];
  /**
   * The newest Kubernetes minor this kind can create, as its `kind version` said (the factory asks once, for
   * {@link localVersions}); absent: asked when first needed.
   */
  readonly newestMinor?: Promise<number | undefined>;
  /**
   * Which API server address the admin kubeconfigs name: `host`, the port kind publishes on the Docker host
   * (for an engine on the host), or `network`, the node's address on the Docker network (for an engine in a
   * Pod of a sibling kind cluster, which cannot reach the host's loopback). Both are observed either way.
   * Default `host`.
   */
  readonly access?: KindAccess;
  /** The Docker CLI, to list the node images at hand when a profile's offer is read; absent: not listed again. */
  readonly docker?: string;
  /**
   * etcdutl, which a snapshot's restore copies into the node (its image has none); default: the one
   * `hack/kube/build.sh etcdutl` builds from the Go module proxy, on the first restore.
   */
  readonly etcdutl?: string;
  /**
   * How many `kind create cluster` run at once on this Docker host; more wait, in order, and their Clusters
   * say so. kubeadm gives up on a control plane that does not come up in 4 minutes, which several creates at
   * once on a small host can take. Default: no limit.
   */
  readonly parallelCreates?: number;
  /**
   * How long to wait after a failed create before the first try again; each later wait is twice the one
   * before. A create that failed because the host was busy (kubeadm's 4 minutes ran out, the API server
   * refused kubeadm's first writes) mostly succeeds once the host is quieter: trying again at once often
   * meets the same load. Default 30 s.
   */
  readonly retryDelayMs?: number;
  /**
   * MetalLB to install into each cluster this backend creates (not into adopted ones), with an address pool
   * from the kind Docker network; absent: none, and no `MetalLBReady` condition. Needs {@link docker}.
   */
  readonly metallb?: MetallbImages;
  /** The Docker network kind puts its nodes on (kind's `KIND_EXPERIMENTAL_DOCKER_NETWORK`, else `kind`). */
  readonly network?: string;
  /**
   * How a new cluster's node gets what it needs at creation (the API server's authentication configuration):
   * `volume`, a Docker volume made and written through {@link docker} — all the engine needs is the Docker
   * socket, wherever it runs; `folder`, this backend's state folder mounted into the node, which works only
   * where that folder has the same path on the Docker host (an engine on the host, or a Pod with the folder
   * mounted at the same path on host, node and Pod). Default: `volume` when {@link docker} is given, else `folder`.
   */
  readonly authn?: "volume" | "folder";
  readonly log?: Logger;
  /** For the records' timestamps. */
  readonly clock?: Clock;
}

/** Where the engine reaches kind's API servers from: the Docker host, or the Docker network (a Pod). */
export type KindAccess = "host" | "network";

/** `--backend-option parallelCreates`: a whole number from 1, or half this machine's processors (at least 1). */
export function parallelCreatesOption(option: string | undefined): number {
  if (option === undefined) return Math.max(1, Math.floor(availableParallelism() / 2));
  const value = Number(option);
  if (Number.isInteger(value) && value >= 1) return value;
  throw new Error(`kind backend: parallelCreates "${option}" must be a whole number from 1 (e.g. 2)`);
}

/** `--backend-option authn`: `volume` (the default: only the Docker socket is needed) or `folder` (see {@link KindBackendOptions.authn}). */
export function kindAuthnOption(option: string | undefined): "volume" | "folder" {
  if (option === undefined || option === "volume" || option === "folder") return option ?? "volume";
  throw new Error(
    `kind backend: authn "${option}" must be volume (a Docker volume per cluster: the engine needs only the Docker socket) or folder (the state folder mounted into nodes: it must have the same path on the Docker host)`,
  );
}

/** `--backend-option access`, or where the engine runs: in a Pod (the API server's Service in its environment) the Docker network. */
export function kindAccess(option: string | undefined, env: NodeJS.ProcessEnv): KindAccess {
  if (option === undefined) return env.KUBERNETES_SERVICE_HOST ? "network" : "host";
  if (option === "host" || option === "network") return option;
  throw new Error(
    `kind backend: access "${option}" must be host (the engine runs on the Docker host) or network (it runs in a Pod on the Docker network)`,
  );
}

/**
 * Finds an executable: a name is looked up on `PATH`, a path (containing `/`) is taken as is. Throws a
 * message saying what to install or pass when there is none.
 */
export function findExecutable(command: string, path = process.env.PATH ?? ""): string {
  if (command.includes("/") || isAbsolute(command)) {
    const file = resolve(command);
    if (isExecutable(file)) return file;
    throw new Error(
      `kind backend: no kind executable at ${file}; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or fix --backend-option kind=<path>`,
    );
  }
  const found = onPath(command, path);
  if (found) return found;
  throw new Error(
    `kind backend: "${command}" was not found on PATH; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or pass --backend-option kind=/path/to/kind`,
  );
}
