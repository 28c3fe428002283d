/** The `local` backend: each Cluster is a real etcd + kube-apiserver on this machine's loopback, kept in the state folder (kind without Docker). */

import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  OidcTrust,
  PoolSupport,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock, type TimerHandle } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import {
  type SnapshotManifest,
  type SnapshotReference,
  SnapshotRejectedError,
} from "../api/control-plane-snapshot.ts";
import { errorMessage } from "../api/error-message.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { kubeconfigYaml } from "../controlplane/control-plane-files.ts";
import { findEtcdutl } from "../controlplane/etcd-snapshot.ts";
import { findKubeAssets, type KubeAssets, kubeAssetVersions } from "../controlplane/kube-assets.ts";
import {
  inspectPersistentControlPlane,
  isBeingRemoved,
  isWhole,
  persistentAdminKubeConfig,
  removeAbandonedControlPlanes,
  stopPersistentControlPlane,
} from "../controlplane/persistent-control-plane.ts";
import {
  describeProcesses,
  failureMessage,
  HIBERNATED_FILE,
  launchLocalCluster,
  RESTORING_FILE,
  RUNTIME_CONFIG_FILE,
  recordedRuntimeConfig,
  runtimeConfigProblem,
  WAKING_FILE,
} from "./local-cluster-folder.ts";
import {
  bareVersion,
  requireOwnKeys,
  seedClusterFolder,
  swapInSnapshotData,
  takeLocalSnapshot,
} from "./local-snapshots.ts";
import { writeAuthenticationConfig } from "./shared/authentication-config.ts";
import { ledgerPools } from "./shared/ledger-pools.ts";
import { folderPoolLedger, type PoolLedger } from "./shared/pool-ledger.ts";
import { durationOption } from "./shared/settings.ts";
import { readOwnSnapshot } from "./shared/snapshot-store.ts";

/** Knobs of the local backend. */
export interface LocalBackendOptions {
  /** The backend's state folder; cluster `<uid>` lives in `clusters/<uid>/`. */
  readonly stateDirectory: string;
  /** The kube-apiserver and etcd to run. */
  readonly assets: KubeAssets;
  /** etcdutl, which restores snapshots; default: beside the assets, else built by `hack/kube/build.sh etcdutl` on first restore. */
  readonly etcdutl?: string;
  /** Their Kubernetes version, `X.Y.Z` (the only one this backend offers). */
  readonly version: string;
  /** Stop every cluster's processes on {@link LocalBackend.close} (their data stays). Default false: they keep running for the next instance. */
  readonly stopOnClose?: boolean;
  /** How long each process of a control plane may take to become healthy. Default 90 s. */
  readonly startTimeoutMs?: number;
  /**
   * kube-apiserver's `--runtime-config` for every cluster whose ProviderConfig sets none (its `settings.runtimeConfig`
   * wins), e.g. `networking.k8s.io/v1beta1=true` to serve beta APIs that are off by default (as clusters still
   * running older workloads do). Default: none.
   */
  readonly runtimeConfig?: string;
  /** How often the supervisor looks for clusters whose processes died. Default 2 s. */
  readonly superviseEveryMs?: number;
  readonly log?: Logger;
  readonly clock?: Clock;
}

/** Why the last start of a cluster failed, and when the supervisor tries again. */
interface StartFailure {
  readonly message: string;
  readonly attempts: number;
  readonly retryAt: number;
}

/** A start running in the background. */
interface StartInProgress {
  readonly done: Promise<void>;
  readonly abort: AbortController;
}

/**
 * A {@link ClusterBackend} whose clusters are persistent control planes (see
 * `src/controlplane/persistent-control-plane.ts`) in `<state folder>/clusters/<Cluster uid>/`: certificates,
 * etcd data, logs, `record.json` (pids, ports, version) and an admin `kubeconfig`.
 *
 * Flow: `create` makes the folder and starts the processes in the background; `observe` reads the folder,
 * `/proc` and `/readyz`; `delete` stops the processes and removes the folder.
 * Guarantees: commands are idempotent by uid (a folder's lock and its record make sure one folder never
 * has two sets of processes, even across instances); the processes outlive the controller. A supervisor
 * (started by {@link resume}, which the factory calls) adopts running clusters, restarts those whose
 * processes are gone from their data, and retries failed starts with backoff (`observe` says
 * `provisioning` meanwhile, `failed` with the reason between attempts).
 * Hibernation (contract 1.6): `hibernate` records the wish to sleep (a `hibernated` file in the cluster's folder,
 * so it outlives the engine) and stops the processes; folder, etcd data, certificates, service-account keys and the
 * recorded ports stay, and neither the supervisor nor `create` starts a hibernated cluster. `wake` swaps that file
 * for `waking` and starts the same processes on the same data and the recorded ports: same endpoint, same CA, and
 * the tokens (whose issuer is the server URL) still verify. A wake whose API server port another process took
 * meanwhile fails (retried with backoff) rather than move the endpoint.
 * Snapshots (contract 1.7): `snapshot` streams etcd's own consistent snapshot (its HTTP gateway) into a folder
 * snapshot beside the certificates and service-account keys; `restore` rolls the cluster back in place: it checks
 * the snapshot (checksums; its CA and service-account key must be this cluster's), records the restore in the
 * folder (`restoring`: neither the supervisor nor `create` starts the cluster meanwhile), stops the processes,
 * makes a new etcd data folder from the snapshot with etcdutl, swaps it in and starts the same processes on the
 * same ports: same endpoint, same CA, and every token and kubeconfig of before still works.
 * Settings (a ProviderConfig's `spec.settings`): `runtimeConfig`, kube-apiserver's `--runtime-config` (over the
 * backend option of that name), recorded in the cluster's folder (`runtime-config`) when it is made; a cluster whose
 * recorded value differs from its target's is `outOfDate` (ready, or failed to start with it), and `update` records
 * the new one and restarts its kube-apiserver (and etcd) on the same data and ports with it.
 * `oidcCertificateAuthority`: see trustOidcIssuers.
 * Caveats: one Kubernetes version, that of the binaries; no workers; no OIDC yet.
 */
export class LocalBackend implements ClusterBackend {
  readonly name = "local";
  /** Real API servers: admin access, and OIDC trust through kube-apiserver's authentication configuration. */
  readonly capabilities = { adminAccess: true, oidc: true } as const;
  /** The Kubernetes version of the binaries, `X.Y.Z`: the only one this backend runs. */
  readonly version: string;
  readonly #options: LocalBackendOptions;
  readonly #clusters: string;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #starts = new Map<string, StartInProgress>();
  readonly #failures = new Map<string, StartFailure>();
  readonly #deleting = new Set<string>();
  /** Clusters a {@link hibernate} of this instance is stopping: the supervisor leaves them alone. */
  readonly #hibernating = new Set<string>();
  /** Clusters an {@link update} of this instance is restarting with new settings: the supervisor leaves them alone. */
  readonly #restarting = new Set<string>();
  /** etcdutl, once a restore needed it. */
  #etcdutl: string | undefined;
  readonly #ledger: PoolLedger;
  /**
   * Warm pools (contract 1.5): a member is a control plane in `clusters/<member id>/`; binding records, in
   * `pool/bindings/<Cluster uid>`, that the Cluster's uid leads to that folder (a running control plane cannot be renamed).
   */
  readonly pools: PoolSupport;
  #timer: TimerHandle | undefined;
  #supervising: Promise<void> | undefined;
  #closed = false;

  constructor(options: LocalBackendOptions) {
    this.#options = options;
    this.version = options.version;
    this.#clusters = join(resolve(options.stateDirectory), "clusters");
    this.#log = (options.log ?? silentLogger).with({ backend: "local" });
    this.#clock = options.clock ?? systemClock;
    this.#ledger = folderPoolLedger(join(resolve(options.stateDirectory), "pool"));
    this.pools = ledgerPools({
      backend: this,
      ledger: this.#ledger,
      leaving: (id) => this.#deleting.has(id),
    });
  }

  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    const listed = config.spec.supportedVersions ?? [];
    if (listed.length === 0) return [{ version: this.version }];
    return listed.filter((entry) => entry.version === this.version);
  }

  traits(config: ProviderConfig): readonly string[] {
    return [...new Set(["workerless", ...(config.spec.traits ?? [])])];
  }

  /**
   * Finishes removals a crash interrupted, adopts running clusters, restarts dead ones from their data
   * (in the background), then checks every {@link LocalBackendOptions.superviseEveryMs} until closed.
   */
  async resume(): Promise<void> {
    await removeAbandonedControlPlanes(this.#clusters);
    // Clones a crash cut short while they were made from their snapshot: their create makes them again.
    await rm(join(resolve(this.#options.stateDirectory), "seeding"), { recursive: true, force: true });
    // Copies of snapshots bound for or read from an object store, left by a crash.
    await rm(this.#snapshotStaging(), { recursive: true, force: true });
    await this.#supervise();
    this.#scheduleSupervision();
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const key = this.#keyOf(target);
    const status = await inspectPersistentControlPlane(this.#directoryOf(key));
    if (!status.exists) return { exists: false };
    const version = bareVersion(status.record?.kubernetesVersion) ?? this.version;
    const directory = this.#directoryOf(key);
    if (existsSync(join(directory, HIBERNATED_FILE))) {
      return status.running || this.#hibernating.has(key)
        ? { exists: true, phase: "hibernating", version, message: "its processes are stopping" }
        : {
            exists: true,
            phase: "hibernated",
            version,
            info: `local etcd + kube-apiserver asleep: data, certificates and ${status.server ?? "its port"} kept`,
          };
    }
    if (existsSync(join(directory, RESTORING_FILE))) {
      const from = (await readFile(join(directory, RESTORING_FILE), "utf8").catch(() => "")).trim();
      return {
        exists: true,
        phase: "provisioning",
        version,
        message: `being rolled back to snapshot ${from || "(unknown)"}: its processes restart on the restored data`,
      };
    }
    const outOfDate = (await this.#recordedRuntimeConfig(key)) !== this.#runtimeConfigOf(target);
    if (status.healthy && status.server && !this.#restarting.has(key)) {
      return {
        exists: true,
        phase: "ready",
        version,
        endpoint: status.server,
        info: describeProcesses(status),
        ...(outOfDate ? { outOfDate: true } : {}),
      };
    }
    const failure = this.#failures.get(key);
    if (failure && !this.#starts.has(key)) {
      // Failed with settings its target no longer asks (e.g. a deleted settings Rollout's): an update may repair it.
      return {
        exists: true,
        phase: "failed",
        version,
        message: failure.message,
        ...(outOfDate ? { outOfDate: true } : {}),
      };
    }
    if (existsSync(join(directory, WAKING_FILE)))
      return {
        exists: true,
        phase: "waking",
        version,
        message: "its processes are starting from their data",
      };
    // Made once and stopped since (killed, a reboot): the supervisor starts it again from its data.
    const why = this.#starts.has(key)
      ? "its processes are starting"
      : status.running
        ? "its API server does not answer /readyz"
        : "its processes are not running; the supervisor starts them again from their data";
    return { exists: true, phase: "provisioning", version, message: why };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    this.#requireVersion("create", target, version);
    const key = this.#keyOf(target);
    if (this.#starts.has(key)) return;
    const directory = this.#directoryOf(key);
    // A clone (contract 1.7): its folder is made whole from the snapshot, once; afterwards it is a cluster like any.
    if (target.restoreFrom && !existsSync(directory)) await this.#seedFromSnapshot(key, target.restoreFrom);
    await mkdir(directory, { recursive: true });
    // Its settings as it is made; kept for every later start (an update records new ones).
    if (!existsSync(join(directory, RUNTIME_CONFIG_FILE)))
      await writeFile(join(directory, RUNTIME_CONFIG_FILE), this.#runtimeConfigOf(target));
    if ((await inspectPersistentControlPlane(directory)).running) return; // one control plane per uid
    if (this.#starts.has(key)) return; // the supervisor began meanwhile
    if (this.#asleep(key) || this.#restoring(key)) return; // hibernated: only wake starts it; restoring: restore does
    this.#failures.delete(key); // asked again: try at once
    this.#startInBackground(key);
  }

  /**
   * Puts the cluster to sleep (contract 1.6): records the wish in its folder first (so no supervisor, of this
   * instance or the next, starts it again), then stops its processes; its folder stays whole. Idempotent.
   */
  async hibernate(target: ClusterTarget): Promise<void> {
    const key = this.#keyOf(target);
    const directory = this.#directoryOf(key);
    if (!(await inspectPersistentControlPlane(directory)).exists)
      throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
    this.#hibernating.add(key);
    try {
      await writeFile(join(directory, HIBERNATED_FILE), `${new Date(this.#clock.now()).toISOString()}\n`);
      await rm(join(directory, WAKING_FILE), { force: true });
      const start = this.#starts.get(key);
      start?.abort.abort();
      await start?.done;
      this.#failures.delete(key);
      await stopPersistentControlPlane(directory, { startTimeoutMs: this.#startTimeoutMs() });
      this.#log.info("local cluster hibernated: processes stopped, data kept", { uid: key });
    } finally {
      this.#hibernating.delete(key);
    }
  }

  /**
   * Wakes a hibernated cluster (contract 1.6): the same processes on the same data and ports, started in the
   * background (`waking` until healthy). Idempotent: a cluster awake or waking is left as it is.
   */
  async wake(target: ClusterTarget): Promise<void> {
    const key = this.#keyOf(target);
    const directory = this.#directoryOf(key);
    if (!(await inspectPersistentControlPlane(directory)).exists)
      throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
    if (this.#asleep(key)) {
      // `waking` before the wish to sleep goes: a crash in between leaves it asleep, and a wake again finishes.
      await writeFile(join(directory, WAKING_FILE), `${new Date(this.#clock.now()).toISOString()}\n`);
      await rm(join(directory, HIBERNATED_FILE), { force: true });
      this.#failures.delete(key); // asked: start at once
    }
    if (this.#starts.has(key) || this.#asleep(key) || this.#restoring(key)) return;
    if ((await inspectPersistentControlPlane(directory)).running) return;
    if (this.#starts.has(key)) return; // the supervisor began meanwhile
    this.#startInBackground(key);
  }

  /**
   * Takes a snapshot of a ready cluster (contract 1.7): etcd's consistent snapshot, streamed from its HTTP gateway,
   * and the certificates and service-account keys, into the folder snapshot `reference` (complete or absent, see
   * folder-snapshots.ts). The cluster keeps serving. Idempotent: a complete snapshot of that name is returned as it is.
   */
  async snapshot(target: ClusterTarget, reference: SnapshotReference): Promise<SnapshotManifest> {
    return takeLocalSnapshot(this.#directoryOf(this.#keyOf(target)), reference, {
      backend: this.name,
      target,
      version: this.version,
      takenAtMs: this.#clock.now(),
      staging: this.#snapshotStaging(),
    });
  }

  /** Where a snapshot kept in an object store is made before its upload and checked after its download. */
  #snapshotStaging(): string {
    return join(resolve(this.#options.stateDirectory), "snapshot-staging");
  }

  /**
   * Rolls the cluster back to snapshot `reference` in place (contract 1.7): endpoint, CA and service-account keys
   * stay. Throws {@link SnapshotRejectedError} (nothing changed) for a snapshot that is unfinished, altered, of
   * another backend, or of another cluster (its CA or service-account key differ). Returns once the restored data
   * is in place; the processes start in the background (`provisioning`, then `ready`). A restore cut short (a
   * crash) leaves the cluster stopped, marked `restoring`, until a restore is asked again.
   */
  async restore(target: ClusterTarget, reference: SnapshotReference): Promise<void> {
    const key = this.#keyOf(target);
    const directory = this.#directoryOf(key);
    const status = await inspectPersistentControlPlane(directory);
    if (!status.exists || !status.record)
      throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
    if (this.#asleep(key))
      throw new Error(
        `local backend: cluster ${target.namespace}/${target.name} is hibernated: wake it before restoring a snapshot`,
      );
    const stored = await readOwnSnapshot(reference, this.name, this.#snapshotStaging());
    try {
      await requireOwnKeys(directory, stored);
      this.#etcdutl ??= this.#options.etcdutl ?? findEtcdutl(this.#options.assets);
      // Marked first: from here on nothing but this restore (or the next one, after a crash) starts the cluster.
      await writeFile(join(directory, RESTORING_FILE), `${reference.name}\n`);
      const start = this.#starts.get(key);
      start?.abort.abort();
      await start?.done;
      this.#failures.delete(key);
      await stopPersistentControlPlane(directory, { startTimeoutMs: this.#startTimeoutMs() });
      await swapInSnapshotData(
        directory,
        stored,
        this.#etcdutl,
        `http://127.0.0.1:${status.record.ports.etcdPeer}`,
      );
    } finally {
      await stored.release();
    }
    await rm(join(directory, RESTORING_FILE), { force: true });
    this.#log.info("local cluster rolled back to a snapshot; its processes start again", {
      uid: key,
      snapshot: reference.name,
    });
    if (!this.#starts.has(key)) this.#startInBackground(key);
  }

  /**
   * Makes cluster `key`'s folder from a snapshot (a clone): the snapshot's certificates and keys, its etcd data
   * restored by etcdutl, and the original's endpoint recorded as an issuer its API server accepts besides its own,
   * so service-account tokens of the original verify. Made in `seeding/` and renamed into place whole, so a crash
   * leaves no half-made cluster; a snapshot refused (checksums, another backend's) makes nothing.
   */
  async #seedFromSnapshot(key: string, reference: SnapshotReference): Promise<void> {
    const stored = await readOwnSnapshot(reference, this.name, this.#snapshotStaging());
    try {
      this.#etcdutl ??= this.#options.etcdutl ?? findEtcdutl(this.#options.assets);
      await mkdir(this.#clusters, { recursive: true });
      const seeding = join(resolve(this.#options.stateDirectory), "seeding");
      await seedClusterFolder(stored, seeding, this.#directoryOf(key), this.#etcdutl);
    } finally {
      await stored.release();
    }
    this.#log.info("local cluster made from a snapshot", { uid: key, snapshot: reference.name });
  }

  /**
   * Only the binaries' version exists here (another one is refused). New settings (`runtimeConfig`) are recorded in
   * the cluster's folder first, then its processes are stopped and started again on the same data and ports with
   * them (`provisioning` meanwhile); a crash in between leaves them recorded, and the supervisor's restart uses them.
   * Idempotent: a cluster running its target's settings is left as it is.
   */
  async update(target: ClusterTarget, version: string): Promise<void> {
    this.#requireVersion("update", target, version);
    const key = this.#keyOf(target);
    const directory = this.#directoryOf(key);
    const wanted = this.#runtimeConfigOf(target);
    if ((await this.#recordedRuntimeConfig(key)) === wanted) return;
    if (!(await inspectPersistentControlPlane(directory)).exists)
      throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
    this.#restarting.add(key);
    try {
      await writeFile(join(directory, RUNTIME_CONFIG_FILE), wanted);
      // Asleep or being restored: the new settings are used when it starts again.
      if (this.#asleep(key) || this.#restoring(key)) return;
      const start = this.#starts.get(key);
      start?.abort.abort();
      await start?.done;
      this.#failures.delete(key);
      await stopPersistentControlPlane(directory, { startTimeoutMs: this.#startTimeoutMs() });
      this.#log.info("local cluster restarting with new settings", { uid: key, runtimeConfig: wanted });
      if (!this.#starts.has(key)) this.#startInBackground(key);
    } finally {
      this.#restarting.delete(key);
    }
  }

  /** Why these ProviderConfig settings cannot be used here (undefined: they can). */
  checkSettings(settings: JsonObject | undefined): string | undefined {
    const runtimeConfig = settings?.runtimeConfig;
    if (runtimeConfig === undefined) return undefined;
    if (typeof runtimeConfig !== "string") return "settings.runtimeConfig must be a string";
    return runtimeConfigProblem(runtimeConfig);
  }

  /** The `--runtime-config` `target` asks for: its settings', else the backend option's ("" for none). */
  #runtimeConfigOf(target: ClusterTarget): string {
    const own = target.settings?.runtimeConfig;
    return typeof own === "string" ? own : (this.#options.runtimeConfig ?? "");
  }

  /** The `--runtime-config` cluster `key` was last started with (a cluster made before it was recorded: the option's). */
  #recordedRuntimeConfig(key: string): Promise<string> {
    return recordedRuntimeConfig(this.#directoryOf(key), this.#options.runtimeConfig ?? "");
  }

  async delete(target: ClusterTarget): Promise<void> {
    const key = this.#keyOf(target);
    const directory = this.#directoryOf(key);
    this.#deleting.add(key);
    try {
      const start = this.#starts.get(key);
      start?.abort.abort();
      await start?.done;
      this.#failures.delete(key);
      await stopPersistentControlPlane(directory, { remove: true, startTimeoutMs: this.#startTimeoutMs() });
      // A pool member's records go after its cluster: a crash in between leaves a member the pool deletes again.
      if (this.#ledger.member(key)) this.#ledger.forget(key);
    } finally {
      this.#deleting.delete(key);
    }
  }

  /** The cluster's admin kubeconfig once it is healthy: by `observed` (the runtime's look moments ago), else by looking now. */
  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    const directory = this.#directoryOf(this.#keyOf(target));
    const ready = observed
      ? observed.exists && observed.phase === "ready"
      : (await inspectPersistentControlPlane(directory)).healthy;
    if (!ready) return undefined;
    const kubeConfig = await persistentAdminKubeConfig(directory);
    return kubeConfig ? { kubeconfig: kubeconfigYaml(kubeConfig) } : undefined;
  }

  /**
   * Writes the cluster's `authentication.yaml` (kube-apiserver's structured authentication configuration,
   * which it reloads without a restart) with one JWT authenticator per issuer. A private CA for the
   * issuers comes from the ProviderConfig's `settings.oidcCertificateAuthority` (PEM).
   */
  async trustOidcIssuers(target: ClusterTarget, issuers: readonly OidcTrust[]): Promise<void> {
    const directory = this.#directoryOf(this.#keyOf(target));
    if (!(await inspectPersistentControlPlane(directory)).exists) {
      throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
    }
    const ca = target.settings?.oidcCertificateAuthority;
    await writeAuthenticationConfig(directory, issuers, typeof ca === "string" ? ca : undefined);
  }

  /** Stops the supervisor and waits for starts in flight; with `stopOnClose`, stops every cluster (data stays). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    await this.#supervising;
    const starts = [...this.#starts.values()];
    if (this.#options.stopOnClose) for (const start of starts) start.abort.abort();
    await Promise.all(starts.map((start) => start.done));
    if (!this.#options.stopOnClose) return;
    for (const uid of await this.#uids()) {
      await stopPersistentControlPlane(join(this.#clusters, uid), { startTimeoutMs: this.#startTimeoutMs() });
    }
  }

  /** The folder key of a Cluster: its bound pool member's id, else its uid. */
  #keyOf(target: ClusterTarget): string {
    return this.#ledger.keyOf(target.uid);
  }

  /** Whether a restore is replacing the cluster's data (read at once, like {@link #asleep}). */
  #restoring(key: string): boolean {
    return existsSync(join(this.#directoryOf(key), RESTORING_FILE));
  }

  /** Whether the cluster was asked to sleep (read at once, so no await comes between this and a start). */
  #asleep(key: string): boolean {
    return existsSync(join(this.#directoryOf(key), HIBERNATED_FILE));
  }

  #directoryOf(uid: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(uid))
      throw new Error(`local backend: "${uid}" is not a Cluster uid`);
    return join(this.#clusters, uid);
  }

  #requireVersion(command: string, target: ClusterTarget, version: string): void {
    if (version === this.version) return;
    throw new Error(
      `local backend: cannot ${command} cluster ${target.namespace}/${target.name} to Kubernetes ${version}: ` +
        `it runs only ${this.version}, the version of ${this.#options.assets.kubeApiserver}. ` +
        `Ask for ${this.version}, or run the backend with --backend-option assets=<folder with kube-apiserver and etcd ${version}>.`,
    );
  }

  #startTimeoutMs(): number {
    return this.#options.startTimeoutMs ?? 90_000;
  }

  #startInBackground(uid: string): void {
    const abort = new AbortController();
    const directory = this.#directoryOf(uid);
    const log = this.#log.with({ uid });
    const done = launchLocalCluster(directory, {
      assets: this.#options.assets,
      runtimeConfig: this.#options.runtimeConfig ?? "",
      startTimeoutMs: this.#startTimeoutMs(),
      signal: abort.signal,
      log,
    })
      .then(async (controlPlane) => {
        this.#failures.delete(uid);
        await rm(join(directory, WAKING_FILE), { force: true });
        log.info(controlPlane.adopted ? "local cluster found running" : "local cluster started", {
          server: controlPlane.server,
          pids: controlPlane.record.pids,
        });
      })
      .catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException).code;
        if (abort.signal.aborted || code === "ENOENT") return; // deleted or closing meanwhile
        const attempts = (this.#failures.get(uid)?.attempts ?? 0) + 1;
        const retryInMs = Math.min(10_000 * 2 ** (attempts - 1), 300_000);
        const message = failureMessage(error, directory, retryInMs);
        this.#failures.set(uid, { message, attempts, retryAt: this.#clock.now() + retryInMs });
        log.warn("local cluster did not start", { error: message, attempts });
      })
      .finally(() => {
        if (this.#starts.get(uid)?.done === done) this.#starts.delete(uid);
      });
    this.#starts.set(uid, { done, abort });
  }

  #scheduleSupervision(): void {
    if (this.#closed) return;
    this.#timer = this.#clock.schedule(() => {
      this.#supervising = this.#supervise().finally(() => this.#scheduleSupervision());
    }, this.#options.superviseEveryMs ?? 2_000);
  }

  /**
   * Restarts every cluster whose processes are gone and finishes those whose start was cut short (unless a start or
   * delete is at it, or a failed one is backing off).
   */
  async #supervise(): Promise<void> {
    for (const uid of await this.#uids()) {
      if (this.#closed) return;
      if (
        this.#starts.has(uid) ||
        this.#deleting.has(uid) ||
        this.#hibernating.has(uid) ||
        this.#restarting.has(uid)
      )
        continue;
      const failure = this.#failures.get(uid);
      if (failure && this.#clock.now() < failure.retryAt) continue;
      const status = await inspectPersistentControlPlane(this.#directoryOf(uid)).catch((error: unknown) => {
        this.#log.warn("cannot inspect a local cluster", { uid, error: errorMessage(error) });
        return undefined;
      });
      const whole = status?.record !== undefined && isWhole(status.record, this.#options.assets);
      if (
        !status?.exists ||
        this.#starts.has(uid) ||
        this.#deleting.has(uid) ||
        this.#hibernating.has(uid) ||
        this.#restarting.has(uid)
      )
        continue;
      if (this.#restoring(uid)) continue; // a restore (or the retry of one cut short) starts it
      if (this.#asleep(uid)) {
        // Hibernated: never started here. Processes still running are a hibernate cut short (a crash): finish it.
        if (status.running) {
          this.#log.info("finishing the hibernation of a local cluster whose processes still run", { uid });
          await stopPersistentControlPlane(this.#directoryOf(uid), {
            startTimeoutMs: this.#startTimeoutMs(),
          });
        }
        continue;
      }
      if (status.running && whole) {
        if (status.healthy) await rm(join(this.#directoryOf(uid), WAKING_FILE), { force: true });
        continue;
      }
      this.#log.info(
        failure
          ? "retrying a failed local cluster"
          : status.running
            ? "finishing a local cluster whose start was cut short"
            : "restarting a local cluster whose processes are gone",
        { uid },
      );
      this.#startInBackground(uid);
    }
  }

  /** Uids of the clusters in the state folder. */
  async #uids(): Promise<string[]> {
    const entries = await readdir(this.#clusters, { withFileTypes: true }).catch(() => []);
    return entries
      .filter((entry) => entry.isDirectory() && !isBeingRemoved(entry.name))
      .map((entry) => entry.name);
  }
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `local` backend from `--backend-option`s: `assets` (folder with kube-apiserver and etcd; default
 * `KUBEBUILDER_ASSETS`, else the binaries `hack/kube/build.sh` builds), `stopOnClose` (`true` stops the
 * clusters when the controller stops; default `false`: they run on and the next start adopts them),
 * `startTimeout` (per process, e.g. `90s`). Adoption happens here: before it returns, the factory finds
 * the clusters of the state folder again and restarts (in the background) those whose processes are gone.
 */
export const createBackend: BackendFactory = async (context: BackendContext) => {
  const { options } = context;
  const stopOnClose = options.stopOnClose ?? "false";
  if (stopOnClose !== "true" && stopOnClose !== "false") {
    throw new Error(`local backend: stopOnClose "${stopOnClose}" must be true or false`);
  }
  const startTimeoutMs = durationOption(options, "startTimeout", {
    backend: "local",
    examples: "90s or 2m",
    positive: true,
  });
  const runtimeConfig = options.runtimeConfig;
  const problem = runtimeConfig === undefined ? undefined : runtimeConfigProblem(runtimeConfig);
  if (problem) throw new Error(`local backend: ${problem}`);
  const assets = findKubeAssets(options.assets === undefined ? undefined : resolve(options.assets));
  const reported = kubeAssetVersions(assets).kubernetes;
  const version = bareVersion(reported);
  if (!version)
    throw new Error(`local backend: ${assets.kubeApiserver} reports no X.Y.Z version ("${reported}")`);
  const backend = new LocalBackend({
    stateDirectory: context.stateDirectory,
    assets,
    version,
    stopOnClose: stopOnClose === "true",
    ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
    ...(runtimeConfig ? { runtimeConfig } : {}),
    log: context.log,
    clock: context.clock,
  });
  await backend.resume();
  return backend;
};
