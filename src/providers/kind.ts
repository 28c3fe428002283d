/** The `kind` backend: one kind (Kubernetes in Docker) cluster per Cluster, driven through the `kind` CLI. */

import { execFile, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { availableParallelism } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse, stringify } from "yaml";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  ConfigOffer,
  OidcTrust,
  PoolMemberSpec,
  PoolSupport,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { LABELS } from "../api/constants.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { writeFileAtomicallySync } from "../util/atomic-file.ts";
import { isExecutable } from "../util/executables.ts";
import { pollUntil } from "../util/poll-until.ts";
import { isProcessAlive, signalProcessGroup } from "../util/process-groups.ts";
import {
  AUTHN_ON_HOST_PLACEHOLDER,
  AuthnVolumes,
  createInVolumeScript,
  dockerRunner,
  NODE_AUTHN_DIRECTORY,
  nodeOf,
} from "./kind-authn-volume.ts";
import {
  dockerNetworkAddresses,
  METALLB_IMAGES,
  type MetallbImages,
  type MetallbState,
  metallbCondition,
  metallbInstallScript,
  metallbOption,
  metallbPoolManifest,
  metallbPoolRange,
} from "./kind-metallb.ts";
import { KIND_NAME_ANNOTATION, kindClusterName, kindClusterNameOf, kindNameOf } from "./kind-names.ts";
import { authenticationConfig, writeAuthenticationConfig } from "./shared/authentication-config.ts";
import { describeCluster } from "./shared/error-wording.ts";
import { ledgerPools } from "./shared/ledger-pools.ts";
import { folderPoolLedger, type PoolLedger } from "./shared/pool-ledger.ts";
import { durationOption } from "./shared/settings.ts";
import { exportStateFolder, importStateFolder } from "./shared/state-folder-handover.ts";

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
   * Which API server address the admin kubeconfigs name: `host`, the port kind publishes on the Docker host
   * (for an engine on the host), or `network`, the node's address on the Docker network (for an engine in a
   * Pod of a sibling kind cluster, which cannot reach the host's loopback). Both are observed either way.
   * Default `host`.
   */
  readonly access?: KindAccess;
  /** The Docker CLI, to list the node images at hand when a profile's offer is read; absent: not listed again. */
  readonly docker?: string;
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

/** A kind command failed; the message carries its exit status and last stderr lines (never its stdout). */
export class KindCommandError extends Error {
  override readonly name = "KindCommandError";
}

/** A kind cluster's API server URLs: the host's published port, and the node's address on the Docker network. */
interface KindEndpoints {
  readonly external: string;
  readonly internal: string;
}

/** What this backend remembers of one cluster: written when its create starts, removed by delete. */
interface KindRecord {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** The kind cluster's name. */
  readonly cluster: string;
  readonly version: string;
  readonly image: string;
  /** The create wrapper's pid (leader of its own process group). */
  readonly pid: number;
  /** When the create started (ISO 8601); tells one create of a cluster from a later one. */
  readonly startedAt: string;
  /**
   * Whether the cluster's kube-apiserver reads the authentication configuration in the cluster's `authn/`
   * folder (OIDC trust). Clusters created before this backend set it up have no such file.
   */
  readonly oidc?: boolean;
  /** Adopted: it ran before this backend knew it (named by {@link KIND_NAME_ANNOTATION}); never deleted by it. */
  readonly adopted?: boolean;
  /**
   * Where its OIDC trust lives: `volume`, a Docker volume written through Docker (see kind-authn-volume.ts);
   * absent: the cluster's `authn/` folder here, mounted from the Docker host (clusters made before volumes).
   */
  readonly authn?: "volume";
  /**
   * Taken over: made for this Cluster by another provider (openMCP's kind provider names it the same way), found
   * running with no record; this backend serves and deletes it like its own, but installs nothing into it.
   */
  readonly takenOver?: boolean;
  /** Waiting for a create slot ({@link KindBackendOptions.parallelCreates}); no process yet. */
  readonly queued?: boolean;
  /** Which try of the create this is, from 1 (absent: 1); see {@link CREATE_ATTEMPTS}. */
  readonly attempt?: number;
  /** Why the previous try failed, shown while this one runs. */
  readonly lastFailure?: string;
}

/**
 * How often a failed `kind create cluster` is tried, the leftovers removed in between: kubeadm gives up on a
 * control plane that is slow to come up on a busy host, which the next try usually gets past.
 */
export const CREATE_ATTEMPTS = 4;

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

/** What this backend remembers of a cluster's MetalLB install: written when it starts. */
interface MetallbRecord {
  /** The install wrapper's pid (leader of its own process group); 0 when it could not start. */
  readonly pid: number;
  /** The pool's addresses, `first-last`; absent when none could be chosen. */
  readonly pool?: string;
}

/** Where a cluster's `kind create cluster` is. */
type CreateState =
  /** Waiting in this instance for a create slot. */
  | { readonly kind: "queued" }
  | { readonly kind: "running" }
  | { readonly kind: "succeeded" }
  /** Failed, with tries left: reported absent, so the engine orders it again, and that create tries again. */
  | { readonly kind: "retry"; readonly message: string }
  /** It failed with tries left, and waits before the next ({@link KindBackendOptions.retryDelayMs}). */
  | { readonly kind: "backoff"; readonly message: string; readonly retryAt: number }
  | { readonly kind: "failed"; readonly message: string }
  /** Its process went with no exit status (killed with its Pod, or the machine restarted): at most half a cluster. */
  | { readonly kind: "interrupted" };

/** A create to start (or waiting for a slot). */
interface CreateOrder {
  readonly target: ClusterTarget;
  readonly cluster: string;
  readonly version: string;
  readonly image: string;
  readonly extraMounts: readonly KindExtraMount[];
  /** From 1. */
  readonly attempt: number;
  readonly lastFailure?: string;
}

/** The node image for `version`: `settings.images[version]` if the ProviderConfig maps it, else `kindest/node:v<version>`. */
export function kindNodeImage(
  version: string,
  settings: JsonObject | undefined,
  providerConfig = "",
): string {
  const images = settings?.images;
  if (images === undefined) return `kindest/node:v${version}`;
  const where = providerConfig ? `ProviderConfig ${providerConfig}: ` : "";
  if (typeof images !== "object" || images === null || Array.isArray(images)) {
    throw new Error(
      `${where}settings.images must map versions to node images, e.g. { "1.34.0": "kindest/node:v1.34.0" }`,
    );
  }
  const image = (images as JsonObject)[version];
  if (image === undefined) return `kindest/node:v${version}`;
  if (typeof image !== "string" || image.trim() === "") {
    throw new Error(
      `${where}settings.images["${version}"] must be a node image name, e.g. kindest/node:v${version}`,
    );
  }
  return image;
}

/** A folder or file of the Docker host mounted into a kind node (kind's `extraMounts`). */
export interface KindExtraMount {
  readonly hostPath: string;
  readonly containerPath: string;
  readonly readOnly?: boolean;
}

/**
 * `settings.extraMounts` of a kind ProviderConfig: host paths mounted into the node of each cluster made from
 * it, e.g. a landscape's platform cluster, whose engine drives sibling kind clusters through the host's
 * Docker socket. Absolute paths only; a ProviderConfig is an administrator's object, so its mounts are trusted.
 */
export function kindExtraMounts(settings: JsonObject | undefined, providerConfig = ""): KindExtraMount[] {
  const mounts = settings?.extraMounts;
  if (mounts === undefined) return [];
  const where = providerConfig ? `ProviderConfig ${providerConfig}: ` : "";
  const example = "[{ hostPath: /var/run/docker.sock, containerPath: /var/run/host-docker.sock }]";
  if (!Array.isArray(mounts)) throw new Error(`${where}settings.extraMounts must be a list, e.g. ${example}`);
  return mounts.map((mount, index) => {
    const fields =
      typeof mount === "object" && mount !== null && !Array.isArray(mount) ? (mount as JsonObject) : {};
    const { hostPath, containerPath, readOnly } = fields;
    if (
      typeof hostPath !== "string" ||
      !isAbsolute(hostPath) ||
      typeof containerPath !== "string" ||
      !isAbsolute(containerPath)
    )
      throw new Error(
        `${where}settings.extraMounts[${index}] needs an absolute hostPath and containerPath, e.g. ${example}`,
      );
    if (readOnly !== undefined && typeof readOnly !== "boolean")
      throw new Error(`${where}settings.extraMounts[${index}].readOnly must be true or false`);
    return { hostPath, containerPath, ...(readOnly ? { readOnly } : {}) };
  });
}

/**
 * kind's cluster configuration for one cluster whose OIDC trust lives in `authnDirectory` on the Docker host
 * (the volume's host path in volume mode, the state folder's `authn/` in folder mode): the folder is mounted
 * into the control-plane node and from there into the kube-apiserver static Pod, which runs with
 * `--authentication-config` (structured authentication configuration). kube-apiserver reloads the file when it
 * changes, so trust changes need no restart. The folder is mounted, not the file: an atomic rename into a
 * mounted folder is seen inside; a file mount would keep the old inode. `writable`: the node may write into it
 * (volume mode writes through the node).
 */
export function kindClusterConfig(
  authnDirectory: string,
  extraMounts: readonly KindExtraMount[] = [],
  writable = false,
): string {
  const apiServerPatch = stringify({
    kind: "ClusterConfiguration",
    apiServer: {
      extraArgs: { "authentication-config": `${NODE_AUTHN_DIRECTORY}/authentication.yaml` },
      extraVolumes: [
        {
          name: "openmcp-authn",
          hostPath: NODE_AUTHN_DIRECTORY,
          mountPath: NODE_AUTHN_DIRECTORY,
          readOnly: true,
          pathType: "Directory",
        },
      ],
    },
  });
  return stringify({
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    nodes: [
      {
        role: "control-plane",
        extraMounts: [
          {
            hostPath: authnDirectory,
            containerPath: NODE_AUTHN_DIRECTORY,
            ...(writable ? {} : { readOnly: true }),
          },
          ...extraMounts,
        ],
        kubeadmConfigPatches: [apiServerPatch],
      },
    ],
  });
}

/**
 * The versions of the `kindest/node:v<X.Y.Z>` images a Docker engine holds, newest first, from the output
 * of `docker image ls --format '{{.Repository}}:{{.Tag}}'`. Other images and tags are ignored.
 */
export function localNodeImageVersions(imageList: string): SupportedVersion[] {
  const versions = new Set<string>();
  for (const line of imageList.split("\n")) {
    const match = /^(?:docker\.io\/)?kindest\/node:v(\d+\.\d+\.\d+)$/.exec(line.trim());
    if (match?.[1]) versions.add(match[1]);
  }
  const key = (version: string) => version.split(".").map(Number);
  return [...versions]
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
      return 0;
    })
    .map((version) => ({ version }));
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

/** The hand-over entry that carries a bound Cluster's pool member (not a file of the cluster's folder). */
const POOL_MEMBER_ENTRY = "pool-member.json";

/**
 * A {@link ClusterBackend} that makes one kind cluster per Cluster (keyed by uid).
 *
 * Flow: `create` starts `kind create cluster` detached in the background (it blocks until the cluster
 * is up) through a small `sh` wrapper that writes the exit status to a file; the record, stdout, stderr
 * and exit status live in `<state>/clusters/<kind name>/`. `observe` reads that folder and
 * `kind get clusters`: create running → provisioning; create failed → failed (last stderr lines);
 * create done and the cluster listed → ready, with the server of `kind get kubeconfig`.
 *
 * Guarantees: one create process per cluster at a time, across restarts (the record names its pid);
 * no kubeconfig in observations or errors (stdout of kind is never quoted, stderr is redacted).
 *
 * Caveats: kind cannot upgrade a cluster, so `update` to another version throws. A failed create is tried
 * again after a wait ({@link CREATE_ATTEMPTS} in all), then stays failed until the Cluster is deleted; an interrupted one (its process gone with no exit status, e.g. with the
 * engine's Pod) is reported absent, and the next create removes what it left and starts over. A cluster deleted behind the engine's back is reported absent,
 * and the engine's next `create` builds it again.
 */
export class KindBackend implements ClusterBackend {
  readonly name = "kind";
  /** Real API servers: admin access, and OIDC trust through kube-apiserver's authentication configuration. */
  readonly capabilities = { adminAccess: true, oidc: true } as const;
  readonly #kind: string;
  readonly #clustersDirectory: string;
  readonly #waitMs: number;
  readonly #commandTimeoutMs: number;
  readonly #localVersions: readonly SupportedVersion[];
  readonly #log: Logger;
  readonly #clock: Clock;
  /** Server URLs already read, by kind name; valid for the create named by `createdBy` (pid and start). */
  readonly #endpoints = new Map<string, { readonly createdBy: string; readonly endpoints: KindEndpoints }>();
  readonly #access: KindAccess;
  readonly #docker: string | undefined;
  /** The node image versions the Docker engine held at the last look (load, then each offer read). */
  #held: readonly SupportedVersion[];
  /** Commands on one cluster run one after another within this instance. */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #parallelCreates: number;
  readonly #retryDelayMs: number;
  /** Creates waiting for a slot, first come first started; a restarted engine orders them again. */
  #waiting: CreateOrder[] = [];
  #waitingTimer: NodeJS.Timeout | undefined;
  readonly #metallb: MetallbImages | undefined;
  readonly #network: string;
  readonly #ledger: PoolLedger;
  /** The clusters' volumes, in volume mode ({@link KindBackendOptions.authn}); undefined in folder mode. */
  readonly #volumes: AuthnVolumes | undefined;
  /**
   * The wrappers this instance started: alive while their process is, whatever their command line says yet (a
   * child not yet past its exec still shows this process's command line, which has no exit file path in it; on a
   * loaded machine a second create then saw the first as interrupted and started beside it). Others' are known by
   * the exit file path in their command line, which no reused pid has.
   */
  readonly #spawned = new Set<number>();
  /** Kind names being deleted here: a pool lists none of them. */
  readonly #deleting = new Set<string>();
  /**
   * Warm pools (contract 1.5): a member is a kind cluster named from its id; kind cannot rename a cluster, so a
   * binding is a record in `pool/bindings/<Cluster uid>` that leads the Cluster's uid to the member's cluster.
   */
  readonly pools: PoolSupport;

  constructor(options: KindBackendOptions) {
    this.#kind = options.kind;
    this.#clustersDirectory = join(options.stateDirectory, "clusters");
    this.#waitMs = options.waitMs ?? 300_000;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 300_000;
    this.#localVersions = options.localVersions ?? [];
    this.#access = options.access ?? "host";
    this.#docker = options.docker;
    this.#parallelCreates = options.parallelCreates ?? Number.POSITIVE_INFINITY;
    this.#retryDelayMs = options.retryDelayMs ?? 30_000;
    this.#held = this.#localVersions;
    this.#log = options.log ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.#metallb = options.metallb;
    this.#network = options.network ?? "kind";
    if (this.#metallb && !this.#docker)
      throw new Error("kind backend: installing MetalLB needs the Docker CLI (the docker option)");
    const authn = options.authn ?? (this.#docker ? "volume" : "folder");
    if (authn === "volume" && !this.#docker)
      throw new Error("kind backend: authn volume needs the Docker CLI (the docker option)");
    this.#volumes =
      authn === "volume" && this.#docker ? new AuthnVolumes(dockerRunner(this.#docker)) : undefined;
    mkdirSync(this.#clustersDirectory, { recursive: true });
    this.#ledger = folderPoolLedger(join(options.stateDirectory, "pool"));
    this.pools = ledgerPools({
      backend: "kind",
      ledger: this.#ledger,
      create: (target, version) => this.create(target, version),
      observe: (target) => this.observe(target),
      delete: (target) => this.delete(target),
      leaving: (id) => this.#deleting.has(kindClusterName(id)),
    });
  }

  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    const listed = config.spec.supportedVersions ?? [];
    if (listed.length > 0) return listed;
    return this.#held.length > 0 ? this.#held : KIND_DEFAULT_VERSIONS;
  }

  /**
   * The offer with the node images the Docker engine holds now (a config that lists none): images loaded
   * later are offered at the next read. When Docker cannot be asked (e.g. a socket this process may not
   * use), it throws saying so, and the ProviderConfig shows it, rather than offer images kind would pull.
   */
  async readOffer(config: ProviderConfig): Promise<ConfigOffer> {
    const traits = this.traits(config);
    if ((config.spec.supportedVersions ?? []).length > 0 || this.#docker === undefined)
      return { versions: this.supportedVersions(config), traits };
    this.#held = await listNodeImages(this.#docker);
    return { versions: this.supportedVersions(config), traits };
  }

  traits(config: ProviderConfig): readonly string[] {
    return config.spec.traits ?? [];
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const cluster = this.#nameOf(target);
    const record = this.#readRecord(cluster) ?? (await this.#recover(target, cluster));
    if (!record) return { exists: false }; // a kind cluster without our record is not ours to report
    const known = {
      exists: true as const,
      version: record.version,
      info: `kind cluster ${cluster} (${record.image})`,
    };
    const create = this.#createState(record);
    // What an interrupted create left is no cluster yet: the engine orders one again, and that create starts over.
    if (create.kind === "interrupted" || create.kind === "retry") return { exists: false };
    if (create.kind === "running") {
      const retrying = record.lastFailure
        ? { message: `try ${record.attempt} of ${CREATE_ATTEMPTS}; the last failed: ${record.lastFailure}` }
        : {};
      return { ...known, phase: "provisioning", ...retrying };
    }
    if (create.kind === "backoff") {
      const seconds = Math.max(1, Math.ceil((create.retryAt - this.#clock.now()) / 1000));
      const message = `try ${record.attempt ?? 1} of ${CREATE_ATTEMPTS} failed, trying again in ${seconds} s: ${create.message}`;
      return { ...known, phase: "provisioning", message };
    }
    if (create.kind === "queued") {
      const message = `waiting to start: ${this.#parallelCreates} kind create(s) run at once on this Docker host (backend option parallelCreates), ${this.#waiting.findIndex((w) => w.cluster === cluster) + 1} of ${this.#waiting.length} waiting`;
      return { ...known, phase: "provisioning", message };
    }
    if (create.kind === "failed") return { ...known, phase: "failed", message: create.message };
    if (!(await this.#listClusters()).includes(cluster)) return { exists: false }; // deleted behind our back
    let ready: ClusterObservation & { exists: true };
    try {
      const { external, internal } = await this.#endpointsOf(record);
      ready = { ...known, phase: "ready", endpoint: external, internalEndpoint: internal };
    } catch (error) {
      return { ...known, phase: "provisioning", message: (error as Error).message };
    }
    if (!this.#installsInto(record)) return ready;
    // Ready once MetalLB is installed (or failed to be: the condition says why); `create` starts the install.
    const metallb = this.#metallbState(cluster);
    const conditions = [metallbCondition(metallb, this.#readMetallbRecord(cluster)?.pool)];
    if (metallb.kind === "absent")
      return { ...ready, phase: "provisioning", incomplete: "MetalLB is not installed yet", conditions };
    if (metallb.kind === "running") return { ...ready, phase: "provisioning", conditions };
    return { ...ready, conditions };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    const cluster = this.#nameOf(target);
    const image = kindNodeImage(version, target.settings, target.providerConfig);
    const extraMounts = kindExtraMounts(target.settings, target.providerConfig);
    await this.#serially(cluster, async () => {
      const record = this.#readRecord(cluster) ?? (await this.#recover(target, cluster));
      const state = record && this.#createState(record);
      if (state?.kind === "interrupted" || state?.kind === "retry") {
        // Its process died with it (e.g. the engine's Pod went mid-create), or it failed with tries left:
        // remove what it left, then start over.
        const retry =
          state.kind === "retry"
            ? { attempt: (record?.attempt ?? 1) + 1, lastFailure: state.message }
            : undefined;
        if (retry)
          this.#log.warn("kind create failed; removing what it left and trying again", {
            cluster,
            attempt: retry.attempt,
            failure: retry.lastFailure,
          });
        else
          this.#log.info("kind create was interrupted; removing what it left and creating again", {
            cluster,
          });
        await this.#run([
          "delete",
          "cluster",
          "--name",
          cluster,
          "--kubeconfig",
          join(this.#folder(cluster), "kubeconfig"),
        ]);
        this.#startOrQueue({
          target,
          cluster,
          version,
          image,
          extraMounts,
          attempt: record?.attempt ?? 1,
          ...retry,
        });
        return;
      }
      if (state && state.kind !== "succeeded") return; // queued, running, or failed until deleted
      const listed = (await this.#listClusters()).includes(cluster);
      if (listed && record) {
        // Exists (one cluster per Cluster); what is left to make is MetalLB, or it is whole.
        if (this.#metallb && this.#installsInto(record) && this.#metallbState(cluster).kind === "absent")
          await this.#startMetallb(target, cluster, this.#metallb);
        return;
      }
      if (listed && target.annotations?.[KIND_NAME_ANNOTATION] === cluster) {
        await this.#adopt(target, cluster, version);
        return;
      }
      if (listed) {
        throw new Error(
          `a kind cluster named ${cluster} exists but this backend has no record of it (was its state folder lost?); delete the Cluster ${target.namespace}/${target.name}, or run \`kind delete cluster --name ${cluster}\``,
        );
      }
      this.#startOrQueue({ target, cluster, version, image, extraMounts, attempt: 1 });
    });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const cluster = this.#nameOf(target);
    const record = this.#readRecord(cluster);
    if (!record)
      throw new Error(`cannot update ${describeCluster(target)}: the kind backend holds no such cluster`);
    if (record.version === version) return;
    throw new Error(
      `kind cannot upgrade a cluster in place: ${describeCluster(target)} runs Kubernetes ${record.version}; to get ${version}, delete the Cluster and create it again, or set spec.kubernetes.version back to ${record.version}`,
    );
  }

  async delete(target: ClusterTarget): Promise<void> {
    const key = this.#ledger.keyOf(target.uid);
    const cluster = this.#nameOf(target);
    this.#deleting.add(cluster);
    try {
      await this.#serially(cluster, () => this.#deleteCluster(target, cluster));
      // Its records last: a crash before leaves a member its pool finds and deletes again.
      if (this.#ledger.member(key)) this.#ledger.forget(key);
    } finally {
      this.#deleting.delete(cluster);
    }
  }

  /** Removes the kind cluster and its folder (an adopted one is only forgotten). */
  async #deleteCluster(target: ClusterTarget, cluster: string): Promise<void> {
    const record = this.#readRecord(cluster);
    const folder = this.#folder(cluster);
    if (record?.adopted) {
      // Not ours to remove: the Cluster only described it. Forgetting it is its deletion here.
      rmSync(folder, { recursive: true, force: true });
      this.#endpoints.delete(cluster);
      this.#log.info("adopted kind cluster left running; the Cluster no longer describes it", {
        cluster,
        target: describeCluster(target),
      });
      return;
    }
    this.#waiting = this.#waiting.filter((waiting) => waiting.cluster !== cluster);
    if (record && this.#createState(record).kind === "running")
      await this.#stopGroup(record.pid, join(folder, "create.exit"));
    const metallb = this.#readMetallbRecord(cluster);
    if (metallb && this.#metallbState(cluster).kind === "running")
      await this.#stopGroup(metallb.pid, join(folder, "metallb.exit"));
    // kind edits the kubeconfig it is given (and would make its folder): keep it away from ~/.kube/config.
    mkdirSync(folder, { recursive: true });
    await deleteKindCluster((args) => this.#run(args), cluster, join(folder, "kubeconfig"));
    // Its volume after its node (Docker keeps a volume a container uses); there is none in folder mode.
    await this.#volumes?.remove(cluster);
    this.#endpoints.delete(cluster);
    rmSync(folder, { recursive: true, force: true });
    if (record) this.#log.info("kind cluster deleted", { cluster, target: describeCluster(target) });
  }

  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    const observation = observed ?? (await this.observe(target));
    if (!observation.exists || observation.phase !== "ready") return undefined;
    const internal = this.#access === "network" ? ["--internal"] : [];
    return {
      kubeconfig: await this.#run(["get", "kubeconfig", "--name", this.#nameOf(target), ...internal]),
    };
  }

  /**
   * Writes the cluster's authentication configuration (one JWT authenticator per issuer) into its `authn/`
   * folder, which its kube-apiserver reads and reloads. A private CA for the issuers comes from the
   * ProviderConfig's `settings.oidcCertificateAuthority` (PEM), as on the `local` backend.
   */
  async trustOidcIssuers(target: ClusterTarget, issuers: readonly OidcTrust[]): Promise<void> {
    const cluster = this.#nameOf(target);
    const record = this.#readRecord(cluster);
    if (!record) throw new Error(`kind backend: ${describeCluster(target)} does not exist`);
    if (!record.oidc) {
      throw new Error(
        `kind backend: ${describeCluster(target)} (kind cluster ${cluster}) was created before this backend set up OIDC trust; delete the Cluster and create it again to use OIDC access`,
      );
    }
    const ca =
      typeof target.settings?.oidcCertificateAuthority === "string"
        ? target.settings.oidcCertificateAuthority
        : undefined;
    if (record.authn !== "volume") {
      await writeAuthenticationConfig(join(this.#folder(cluster), "authn"), issuers, ca);
      return;
    }
    if (!this.#volumes)
      throw new Error(
        `kind backend: ${describeCluster(target)} (kind cluster ${cluster}) keeps its OIDC trust in a Docker volume, and this backend runs without the Docker CLI (backend option docker)`,
      );
    await this.#volumes.write(cluster, authenticationConfig(issuers, ca));
  }

  /**
   * The cluster's folder (contract 1.5): its record, create status, kind config and OIDC trust, for the engine
   * it moves to. A create still running (or queued) is refused: its process writes here, on this host only.
   */
  async exportCluster(target: ClusterTarget): Promise<Readonly<Record<string, string>>> {
    const cluster = this.#nameOf(target);
    const record = this.#readRecord(cluster);
    if (!record) return {};
    const create = this.#createState(record);
    if (create.kind === "running" || create.kind === "queued")
      throw new Error(
        `kind cluster ${cluster} of ${describeCluster(target)} is still being created: move it once it is Ready`,
      );
    const folder = exportStateFolder(this.#folder(cluster));
    // A Cluster bound to a pool member: its binding travels too, or the other engine would look for the uid's own cluster.
    const member = this.#ledger.member(this.#ledger.keyOf(target.uid));
    return member ? { ...folder, [POOL_MEMBER_ENTRY]: JSON.stringify(member) } : folder;
  }

  /** Takes over another instance's folder of the cluster (contract 1.5); files this instance has stay. */
  async importCluster(target: ClusterTarget, entries: Readonly<Record<string, string>>): Promise<void> {
    const { [POOL_MEMBER_ENTRY]: member, ...state } = entries;
    if (member !== undefined) {
      const spec = JSON.parse(member) as PoolMemberSpec;
      this.#ledger.addMember(spec);
      this.#ledger.bind(target.uid, spec.id);
    }
    const cluster = this.#nameOf(target);
    const handed = state["record.json"];
    if (handed === undefined) return;
    if ((JSON.parse(handed) as KindRecord).cluster !== cluster)
      throw new Error(
        `kind backend: the state handed over is of another cluster than ${describeCluster(target)} (${cluster})`,
      );
    importStateFolder(this.#folder(cluster), state);
  }

  #folder(cluster: string): string {
    return join(this.#clustersDirectory, cluster);
  }

  /**
   * The kind cluster a target leads to: a pool member's (named from its id: it has no Cluster name) for a member
   * or a Cluster bound to one; the engine's former name for a Cluster made under it (its record is here); else
   * {@link kindNameOf}.
   */
  #nameOf(target: ClusterTarget): string {
    const key = this.#ledger.keyOf(target.uid);
    if (this.#ledger.member(key)) return kindClusterName(key);
    if (target.annotations?.[KIND_NAME_ANNOTATION] !== undefined) return kindNameOf(target);
    const former = kindClusterName(target.uid);
    return existsSync(join(this.#folder(former), "record.json"))
      ? former
      : kindClusterNameOf(target.name, target.uid);
  }

  /** Whether the wrapper `pid` that writes `exitFile` runs (see {@link #spawned}). */
  #alive(pid: number, exitFile: string): boolean {
    if (this.#spawned.has(pid)) {
      if (isProcessAlive(pid)) return true;
      this.#spawned.delete(pid);
      return false;
    }
    return isProcessAlive(pid, exitFile);
  }

  /** Whether this backend installs MetalLB into the cluster: not into one it adopted or took over. */
  #installsInto(record: KindRecord): boolean {
    return this.#metallb !== undefined && !record.adopted && !record.takenOver;
  }

  /**
   * The record of a kind cluster that runs with none here (the state folder is lost with an engine's Pod, and
   * nothing else is shared with the host in openMCP's deployment), made again from Docker and written here:
   * - its volume names the target's uid: this backend made it; its create finished if the create marked the
   *   volume, else it is taken for interrupted (removed and made again, as any interrupted create);
   * - no volume of ours, and its name is the one openMCP's kind provider gives this Cluster
   *   (`<name>.<uid prefix>`): that provider made it; it is taken over as it runs, never re-created;
   * - else: undefined (another's; `create` refuses to touch it).
   */
  async #recover(target: ClusterTarget, cluster: string): Promise<KindRecord | undefined> {
    if (!(await this.#listClusters()).includes(cluster)) return undefined;
    const owner = await this.#volumes?.owner(cluster);
    const key = this.#ledger.keyOf(target.uid);
    const image = await this.#nodeImage(cluster);
    const version = image.match(/:v(\d+\.\d+\.\d+)$/)?.[1] ?? target.labels?.[LABELS.k8sVersion] ?? "unknown";
    mkdirSync(this.#folder(cluster), { recursive: true });
    const finished = () => writeFileAtomicallySync(join(this.#folder(cluster), "create.exit"), "0\n");
    if (owner) {
      if (owner.uid !== key) return undefined;
      const created = await (this.#volumes as AuthnVolumes).created(cluster);
      if (created) finished();
      this.#writeRecord(target, cluster, { version, image, pid: 0, oidc: true, authn: "volume" });
      this.#log.info(
        created
          ? "kind cluster found with no record here: its volume says this backend made it"
          : "kind cluster found with no record here and its create unfinished: it is made again",
        { cluster, target: describeCluster(target) },
      );
      return this.#readRecord(cluster);
    }
    if (target.annotations?.[KIND_NAME_ANNOTATION] !== undefined) return undefined; // adopted by create
    if (cluster !== kindClusterNameOf(target.name, target.uid)) return undefined;
    finished();
    this.#writeRecord(target, cluster, { version, image, pid: 0, takenOver: true });
    this.#log.info(
      "kind cluster taken over: it runs under the name openMCP's kind provider gives this Cluster",
      {
        cluster,
        version,
        target: describeCluster(target),
      },
    );
    return this.#readRecord(cluster);
  }

  /** The image of the cluster's control-plane node container (e.g. kindest/node:v1.36.3); "" when unknown. */
  async #nodeImage(cluster: string): Promise<string> {
    if (!this.#docker) return "";
    return (
      await dockerOutput(this.#docker, ["inspect", "--format", "{{.Config.Image}}", nodeOf(cluster)]).catch(
        () => "",
      )
    ).trim();
  }

  #readRecord(cluster: string): KindRecord | undefined {
    try {
      return JSON.parse(readFileSync(join(this.#folder(cluster), "record.json"), "utf8")) as KindRecord;
    } catch {
      return undefined;
    }
  }

  /** Records a running kind cluster it did not make, at the version its node image says (else the one asked). */
  async #adopt(target: ClusterTarget, cluster: string, asked: string): Promise<void> {
    const image = await this.#nodeImage(cluster);
    const version = image.match(/:v(\d+\.\d+\.\d+)$/)?.[1] ?? asked;
    mkdirSync(this.#folder(cluster), { recursive: true });
    this.#writeRecord(target, cluster, { version, image: image || "adopted", pid: 0, adopted: true });
    this.#log.info("kind cluster adopted", { cluster, version, target: describeCluster(target) });
  }

  /** Writes what this backend remembers of the target's kind cluster, started now. */
  #writeRecord(
    target: ClusterTarget,
    cluster: string,
    fields: Pick<
      KindRecord,
      | "version"
      | "image"
      | "pid"
      | "oidc"
      | "adopted"
      | "queued"
      | "attempt"
      | "lastFailure"
      | "authn"
      | "takenOver"
    >,
  ): void {
    const record: KindRecord = {
      uid: target.uid,
      namespace: target.namespace,
      name: target.name,
      cluster,
      ...fields,
      startedAt: new Date(this.#clock.now()).toISOString(),
    };
    writeFileAtomicallySync(join(this.#folder(cluster), "record.json"), JSON.stringify(record, null, 2));
  }

  /** Reads the create's exit status file; while it is missing, the create runs if its wrapper does. */
  #createState(record: KindRecord): CreateState {
    if (record.adopted) return { kind: "succeeded" };
    // Queued by an instance that is gone (e.g. the engine restarted): nothing started; the engine orders it again.
    if (record.queued)
      return this.#waiting.some((w) => w.cluster === record.cluster)
        ? { kind: "queued" }
        : { kind: "interrupted" };
    const folder = this.#folder(record.cluster);
    const exitFile = join(folder, "create.exit");
    const readExit = () => {
      try {
        return readFileSync(exitFile, "utf8").trim();
      } catch {
        return undefined;
      }
    };
    let code = readExit();
    if (code === undefined) {
      if (this.#alive(record.pid, exitFile)) return { kind: "running" };
      code = readExit(); // it may have finished between the two looks
    }
    if (code === "0") return { kind: "succeeded" };
    if (code === undefined) return { kind: "interrupted" };
    const stderr = stderrSummary(readText(join(folder, "create.stderr")), 5);
    const attempt = record.attempt ?? 1;
    const failure = `kind create cluster exited with ${code}${stderr ? `: ${stderr}` : ""}`;
    if (attempt < CREATE_ATTEMPTS) {
      const retryAt = modifiedAt(exitFile) + this.#retryDelayMs * 2 ** (attempt - 1);
      return retryAt > this.#clock.now()
        ? { kind: "backoff", message: failure, retryAt }
        : { kind: "retry", message: failure };
    }
    return {
      kind: "failed",
      message: `${failure} (try ${attempt} of ${CREATE_ATTEMPTS}); delete the Cluster to clean up, then create it again`,
    };
  }

  /** The `kind create cluster` processes running on this Docker host from this state folder. */
  #runningCreates(): number {
    let running = 0;
    let entries: string[];
    try {
      entries = readdirSync(this.#clustersDirectory);
    } catch (error) {
      // The state folder removed under a waiting create (its timer outlives it): nothing runs from it.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
    for (const entry of entries) {
      const record = this.#readRecord(entry);
      if (record && this.#createState(record).kind === "running") running++;
    }
    return running;
  }

  /** Starts the create now if a slot is free and none waits before it, else queues it (see {@link CreateOrder}). */
  #startOrQueue(create: CreateOrder): void {
    if (this.#waiting.length === 0 && this.#runningCreates() < this.#parallelCreates) {
      this.#startCreate(create);
      return;
    }
    if (this.#waiting.some((waiting) => waiting.cluster === create.cluster)) return;
    mkdirSync(this.#folder(create.cluster), { recursive: true });
    this.#writeRecord(create.target, create.cluster, {
      version: create.version,
      image: create.image,
      pid: 0,
      queued: true,
      attempt: create.attempt,
      ...(create.lastFailure === undefined ? {} : { lastFailure: create.lastFailure }),
    });
    this.#waiting.push(create);
    this.#log.info("kind create waits for a free slot", {
      cluster: create.cluster,
      parallelCreates: this.#parallelCreates,
      waiting: this.#waiting.length,
    });
    this.#pollWaiting();
  }

  /** Looks again in 2 s whether a slot is free, while creates wait. */
  #pollWaiting(): void {
    if (this.#waitingTimer !== undefined || this.#waiting.length === 0) return;
    this.#waitingTimer = setTimeout(() => {
      this.#waitingTimer = undefined;
      void this.#startWaiting();
    }, 2_000);
    this.#waitingTimer.unref();
  }

  async #startWaiting(): Promise<void> {
    while (this.#waiting.length > 0 && this.#runningCreates() < this.#parallelCreates) {
      const next = this.#waiting[0] as CreateOrder;
      await this.#serially(next.cluster, async () => {
        this.#waiting = this.#waiting.filter((waiting) => waiting !== next);
        // Deleted while it waited: its record went with it.
        if (!this.#readRecord(next.cluster)?.queued) return;
        try {
          this.#startCreate(next);
        } catch (error) {
          // Its record stays queued with no waiter: observed absent, so the engine orders it again.
          this.#log.warn("kind create could not start", {
            cluster: next.cluster,
            error: (error as Error).message,
          });
        }
      });
    }
    this.#pollWaiting();
  }

  #startCreate(order: CreateOrder): void {
    const { target, cluster, version, image } = order;
    const folder = this.#folder(cluster);
    rmSync(folder, { recursive: true, force: true }); // what a previous create of this Cluster left
    const authn = join(folder, "authn");
    mkdirSync(authn, { recursive: true });
    // kube-apiserver refuses to start without the file: it starts trusting no issuer.
    writeFileAtomicallySync(join(authn, "authentication.yaml"), authenticationConfig([]));
    const config = join(folder, "kind-config.yaml");
    const args = [
      "create",
      "cluster",
      "--name",
      cluster,
      "--image",
      image,
      "--config",
      config,
      "--kubeconfig",
      join(folder, "kubeconfig"),
      "--wait",
      `${Math.ceil(this.#waitMs / 1000)}s`,
    ];
    const files = {
      marker: "omc-kind-create",
      exitFile: join(folder, "create.exit"),
      stdout: join(folder, "create.stdout"),
      stderr: join(folder, "create.stderr"),
    };
    let pid: number | undefined;
    if (this.#volumes) {
      // The volume's host path is known only once the create made it: the script fills it into the config.
      const template = join(folder, "kind-config.template.yaml");
      writeFileAtomicallySync(
        template,
        kindClusterConfig(AUTHN_ON_HOST_PLACEHOLDER, order.extraMounts, true),
      );
      pid = startDetached(files, "/bin/sh", [
        "-c",
        createInVolumeScript,
        "omc-kind-create-in-volume",
        this.#kind,
        this.#docker ?? "docker",
        image,
        join(authn, "authentication.yaml"),
        template,
        config,
        this.#ledger.keyOf(target.uid),
        `${target.namespace}/${target.name}`,
        cluster,
        ...args,
      ]);
    } else {
      writeFileAtomicallySync(config, kindClusterConfig(authn, order.extraMounts));
      pid = startDetached(files, this.#kind, args);
    }
    if (pid === undefined)
      throw new Error(`could not start kind create cluster for ${describeCluster(target)}`);
    this.#spawned.add(pid);
    this.#writeRecord(target, cluster, {
      version,
      image,
      pid,
      oidc: true,
      ...(this.#volumes ? { authn: "volume" as const } : {}),
      attempt: order.attempt,
      ...(order.lastFailure === undefined ? {} : { lastFailure: order.lastFailure }),
    });
    this.#log.info("kind create started", { cluster, image, pid, target: describeCluster(target) });
  }

  /** Stops a running create or install (its wrapper's whole process group): SIGTERM, then SIGKILL after 10 s. */
  async #stopGroup(pid: number, exitFile: string): Promise<void> {
    signalProcessGroup(pid, "SIGTERM");
    for (let waited = 0; waited < 10_000 && isProcessAlive(pid, exitFile); waited += 50) await sleep(50);
    signalProcessGroup(pid, "SIGKILL");
  }

  #readMetallbRecord(cluster: string): MetallbRecord | undefined {
    try {
      return JSON.parse(readFileSync(join(this.#folder(cluster), "metallb.json"), "utf8")) as MetallbRecord;
    } catch {
      return undefined;
    }
  }

  /** Where the cluster's MetalLB install is; an interrupted one (no exit status, no process) is absent: run again. */
  #metallbState(cluster: string): MetallbState {
    const record = this.#readMetallbRecord(cluster);
    if (!record) return { kind: "absent" };
    const exitFile = join(this.#folder(cluster), "metallb.exit");
    let code = readText(exitFile).trim();
    if (code === "") {
      if (isProcessAlive(record.pid, exitFile)) return { kind: "running" };
      code = readText(exitFile).trim(); // it may have finished between the two looks
    }
    if (code === "0") return { kind: "succeeded" };
    if (code === "") return { kind: "absent" };
    const log = stderrSummary(readText(join(this.#folder(cluster), "metallb.log")), 1);
    return {
      kind: "failed",
      message: `MetalLB install exited with ${code}${log ? `: ${log}` : ""}; delete the Cluster and create it again to retry`,
    };
  }

  /**
   * Starts installing MetalLB into a created cluster, detached like the create (loading images and waiting
   * for the controller takes a minute): the pool is chosen now, from the node's address on the kind network.
   * A pool that cannot be chosen is recorded as a failed install, whose message the condition shows.
   */
  async #startMetallb(target: ClusterTarget, cluster: string, images: MetallbImages): Promise<void> {
    const folder = this.#folder(cluster);
    const docker = this.#docker ?? "docker";
    const node = `${cluster}-control-plane`;
    for (const file of ["metallb.exit", "metallb.log"]) rmSync(join(folder, file), { force: true });
    let pool: string;
    try {
      const network = dockerNetworkAddresses(
        await dockerOutput(docker, ["network", "inspect", this.#network, "--format", "{{json .}}"]),
      );
      const address = (
        await dockerOutput(docker, [
          "inspect",
          "--format",
          `{{with index .NetworkSettings.Networks "${this.#network}"}}{{.IPAddress}}{{end}}`,
          node,
        ])
      ).trim();
      const range = metallbPoolRange(network.subnet, address, network.addresses);
      pool = `${range.first}-${range.last}`;
      writeFileAtomicallySync(join(folder, "metallb-pool.yaml"), metallbPoolManifest(range));
    } catch (error) {
      writeFileAtomicallySync(
        join(folder, "metallb.log"),
        `ERROR: choosing the address pool failed: ${(error as Error).message}\n`,
      );
      writeFileAtomicallySync(join(folder, "metallb.exit"), "1\n");
      writeFileAtomicallySync(join(folder, "metallb.json"), JSON.stringify({ pid: 0 }));
      return;
    }
    const log = join(folder, "metallb.log");
    const pid = startDetached(
      { marker: "omc-kind-metallb", exitFile: join(folder, "metallb.exit"), stdout: log, stderr: log },
      "/bin/sh",
      [
        "-c",
        metallbInstallScript,
        "omc-metallb-install",
        docker,
        this.#kind,
        cluster,
        node,
        join(folder, "metallb-native.yaml"),
        join(folder, "metallb-pool.yaml"),
        images.controller,
        images.speaker,
      ],
    );
    if (pid === undefined)
      throw new Error(`could not start the MetalLB install for ${describeCluster(target)}`);
    writeFileAtomicallySync(
      join(folder, "metallb.json"),
      JSON.stringify({ pid, pool } satisfies MetallbRecord),
    );
    this.#log.info("MetalLB install started", { cluster, pool, pid, target: describeCluster(target) });
  }

  /** The cluster's API server as the host and as the Docker network reach it (read once per create). */
  async #endpointsOf(record: KindRecord): Promise<KindEndpoints> {
    const createdBy = `${record.pid}@${record.startedAt}`;
    const cached = this.#endpoints.get(record.cluster);
    if (cached?.createdBy === createdBy) return cached.endpoints;
    const endpoints = {
      external: await this.#server(record.cluster, []),
      internal: await this.#server(record.cluster, ["--internal"]),
    };
    this.#endpoints.set(record.cluster, { createdBy, endpoints });
    return endpoints;
  }

  async #server(cluster: string, flags: readonly string[]): Promise<string> {
    const kubeconfig = await this.#run(["get", "kubeconfig", "--name", cluster, ...flags]);
    let server: string | undefined;
    try {
      server = kubeconfigServer(kubeconfig);
    } catch {
      server = undefined;
    }
    if (!server)
      throw new Error(`kind get kubeconfig ${[...flags, ""].join(" ")}for ${cluster} names no server`);
    return server;
  }

  async #listClusters(): Promise<string[]> {
    const out = await this.#run(["get", "clusters"]);
    return out
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("No kind clusters"));
  }

  /** Runs kind and returns its stdout; a failure throws {@link KindCommandError} quoting stderr only. */
  #run(args: readonly string[]): Promise<string> {
    return new Promise((resolvePromise, reject) => {
      execFile(
        this.#kind,
        [...args],
        { encoding: "utf8", timeout: this.#commandTimeoutMs, maxBuffer: 16 * 1024 * 1024 },
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

  #serially<T>(cluster: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(cluster) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => {});
    this.#queues.set(cluster, settled);
    void settled.then(() => {
      if (this.#queues.get(cluster) === settled) this.#queues.delete(cluster);
    });
    return next;
  }
}

/** Where a detached command's output and exit status go; `marker` names its wrapper in the process list. */
interface DetachedFiles {
  readonly marker: string;
  readonly exitFile: string;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts `command args` detached in its own process group through {@link createWrapper}, which outlives this
 * process and records the exit status, so any later instance can read it. Returns the wrapper's pid.
 */
function startDetached(files: DetachedFiles, command: string, args: readonly string[]): number | undefined {
  const stdout = openSync(files.stdout, "w");
  const stderr = files.stderr === files.stdout ? stdout : openSync(files.stderr, "w");
  try {
    const child = spawn("/bin/sh", ["-c", createWrapper, files.marker, files.exitFile, command, ...args], {
      detached: true,
      stdio: ["ignore", stdout, stderr],
    });
    child.on("error", () => {}); // reported through the missing exit status
    child.unref();
    return child.pid;
  } finally {
    closeSync(stdout);
    if (stderr !== stdout) closeSync(stderr);
  }
}

/** `sh -c` script: runs `"$@"` and writes its exit status to `$1` atomically. */
const createWrapper = [
  'exit_file="$1"',
  "shift",
  '"$@"',
  "code=$?",
  'printf "%s\\n" "$code" > "$exit_file.tmp" && mv -f "$exit_file.tmp" "$exit_file"',
  'exit "$code"',
].join("\n");

/** When a file was last written (the wrapper writes the exit status when `kind create` ends), in epoch ms. */
function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** A klog info or warning line (`I1126 09:15:35.856025 …`, `W1126 …`) of a command kind ran: progress, not the cause. */
const KLOG_PROGRESS = /^[IW]\d{4} \d{2}:\d{2}:\d{2}/;
/** A line of a Go stack trace kubeadm prints after its error (`runtime.main`, `runtime/proc.go:290`): no words. */
const STACK_TRACE = /^\S+$/;

/**
 * One line for people from kind's stderr, redacted: its last `ERROR:` line and the last `count - 1` lines of
 * the failed command's output after it, klog's progress and Go's stack trace left out (kubeadm's cause
 * comes between pages of progress and its stack trace), else its last `count` lines.
 */
export function stderrSummary(text: string, count: number): string {
  const lines = redact(text)
    .split("\n")
    .map((line) => line.trim().replace(/^Command Output: /, ""))
    .filter((line) => line !== "");
  const error = lines.findLastIndex((line) => line.startsWith("ERROR:"));
  const cause = lines.slice(error + 1).filter((line) => !KLOG_PROGRESS.test(line) && !STACK_TRACE.test(line));
  return (error >= 0 ? [lines[error] ?? "", ...cause.slice(-(count - 1))] : lines.slice(-count))
    .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line))
    .join(" | ");
}

/**
 * Removes anything that looks like a credential: PEM blocks (to their END line, or to the first line
 * that is not base64), lines naming kubeconfig secret fields, and long base64 runs.
 */
export function redact(text: string): string {
  const out: string[] = [];
  let inPem = false;
  for (const line of text.split("\n")) {
    if (inPem) {
      if (/-----END [A-Z ]+-----/.test(line)) {
        inPem = false;
        continue;
      }
      if (/^\s*[A-Za-z0-9+/=]*\s*$/.test(line)) continue;
      inPem = false;
    }
    if (/-----BEGIN [A-Z ]+-----/.test(line)) {
      out.push("[redacted]");
      inPem = !/-----END [A-Z ]+-----/.test(line);
    } else if (/(-data|token|password|secret)\s*[:=]/i.test(line)) {
      out.push("[redacted]");
    } else {
      out.push(line.replace(/[A-Za-z0-9+/=_-]{64,}/g, "[redacted]"));
    }
  }
  return out.join("\n");
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
  for (const folder of path.split(delimiter)) {
    if (folder === "") continue;
    const file = join(folder, command);
    if (isExecutable(file)) return file;
  }
  throw new Error(
    `kind backend: "${command}" was not found on PATH; install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation) or pass --backend-option kind=/path/to/kind`,
  );
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `kind` backend from `--backend-option`s: `kind` (the executable; default `kind` on PATH), `wait` (how
 * long `kind create cluster` waits for the control plane, e.g. `5m`; default 5 min) and `docker` (the
 * Docker CLI kind uses, to list the node images at hand; default `docker` on PATH) and `access` (`host` or
 * `network`, see {@link KindBackendOptions.access}; default `network` in a Pod — `KUBERNETES_SERVICE_HOST` is
 * set — else `host`), `parallelCreates` (see {@link KindBackendOptions.parallelCreates}; default half this
 * machine's processors, at least 1: a kind node boots a whole control plane) and `metallb` (`true` or
 * `false`, default `false`: MetalLB's images come from `hack/metallb/build.sh`, not from a registry, and
 * installing it adds about a minute to each create), `retryDelay` (the wait before a failed create is tried
 * again, doubled for each later try; default 30s, see {@link KindBackendOptions.retryDelayMs}), `authn` (`volume` or
 * `folder`, default `volume`: see {@link KindBackendOptions.authn}). Kind itself needs Docker (or Podman); that is checked by
 * kind, and its errors show in the failed Cluster.
 */
export const createBackend: BackendFactory = async (context: BackendContext) => {
  const kind = findExecutable(context.options.kind ?? "kind");
  const access = kindAccess(context.options.access, process.env);
  const waitMs = durationOption(context.options, "wait", { backend: "kind", examples: "90s or 5m" });
  const retryDelayMs = durationOption(context.options, "retryDelay", {
    backend: "kind",
    examples: "30s or 2m",
  });
  const log = context.log.with({ backend: "kind" });
  const docker = context.options.docker ?? "docker";
  const localVersions = await listLocalNodeImages(docker, log);
  const parallelCreates = parallelCreatesOption(context.options.parallelCreates);
  const metallb = metallbOption(context.options.metallb);
  const network = process.env.KIND_EXPERIMENTAL_DOCKER_NETWORK || "kind";
  const authn = kindAuthnOption(context.options.authn);
  return new KindBackend({
    authn,
    parallelCreates,
    ...(metallb ? { metallb: METALLB_IMAGES } : {}),
    network,
    kind,
    stateDirectory: context.stateDirectory,
    ...(waitMs === undefined ? {} : { waitMs }),
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
    localVersions,
    docker,
    access,
    log,
    clock: context.clock,
  });
};

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

/** The node image versions the Docker engine holds; none (with a warning) when Docker cannot be asked. */
async function listLocalNodeImages(docker: string, log: Logger): Promise<SupportedVersion[]> {
  try {
    const versions = await listNodeImages(docker);
    log.info("kind node images at hand", { versions: versions.map((v) => v.version) });
    return versions;
  } catch (error) {
    log.warn("could not list the kindest/node images", { docker, error: (error as Error).message });
    return [];
  }
}

/** The node image versions the Docker engine holds; rejects saying why Docker could not be asked. */
async function listNodeImages(docker: string): Promise<SupportedVersion[]> {
  try {
    return localNodeImageVersions(
      await dockerOutput(docker, ["image", "ls", "--format", "{{.Repository}}:{{.Tag}}", "kindest/node"]),
    );
  } catch (error) {
    throw new Error(
      `kind backend: cannot list the kindest/node images (${docker} image ls: ${(error as Error).message}); make the Docker socket usable by the engine, or list the versions in spec.supportedVersions`,
    );
  }
}

/** A Docker CLI command's stdout; rejects with its last stderr lines (or how it failed). */
const dockerOutput = (docker: string, args: readonly string[]): Promise<string> =>
  dockerRunner(docker, 30_000)(args);
