/** The kind backend itself: each call of the engine looks at the cluster, lets `create-lifecycle.ts` decide, acts. */

import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { copyFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type {
  AdminAccess,
  ClusterBackend,
  ConfigOffer,
  OidcTrust,
  PoolSupport,
} from "../../api/backend-contract.ts";
import { type Clock, systemClock } from "../../api/clock.ts";
import type { SupportedVersion } from "../../api/cluster-profile.ts";
import type { SnapshotManifest, SnapshotReference } from "../../api/control-plane-snapshot.ts";
import { type Logger, silentLogger } from "../../api/logger.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import { builtEtcdutl } from "../../controlplane/etcd-snapshot.ts";
import { KeyedLock } from "../../util/keyed-lock.ts";
import { type GroupLeader, isProcessAlive, stopProcessGroup } from "../../util/process-groups.ts";
import { type DockerRun, dockerRunner } from "../shared/docker-cli.ts";
import { describeCluster } from "../shared/error-wording.ts";
import {
  NODE_ETCD_SNAPSHOT_FILE,
  nodeSnapshotFiles,
  requireNodeKeys,
  rollBackNode,
  seedCloneNode,
  writeSeedPki,
} from "../shared/kubeadm-node-snapshots.ts";
import { ledgerPools } from "../shared/ledger-pools.ts";
import { folderPoolLedger, type PoolLedger } from "../shared/pool-ledger.ts";
import { describeSnapshot, readOwnSnapshot, writeSnapshot } from "../shared/snapshot-store.ts";
import { AuthnVolumes, nodeOf } from "./authn-volume.ts";
import { kindExtraMounts, kindNodeImage } from "./cluster-config.ts";
import { KindCli, listNodeImages } from "./commands.ts";
import {
  CREATE_ATTEMPTS,
  type CreateState,
  type CreateStep,
  createStateOf,
  creatingObservation,
  deletePlan,
  nextCreateStep,
  recordedCluster,
} from "./create-lifecycle.ts";
import { CreateLine } from "./create-line.ts";
import { type CreateOrder, recordQueued, startCreate } from "./create-process.ts";
import { exportKindCluster, importKindCluster, importPoolMember } from "./handover.ts";
import { type MetallbImages, metallbCondition } from "./metallb.ts";
import { MetallbInstalls } from "./metallb-install.ts";
import { KIND_NAME_ANNOTATION, kindClusterName, kindClusterNameOf, kindNameOf } from "./names.ts";
import { trustIssuers } from "./oidc-trust.ts";
import { adoptCluster, type RecoveryTools, recoverRecord } from "./recovery.ts";
import { KIND_DEFAULT_VERSIONS, type KindAccess, type KindBackendOptions } from "./settings.ts";
import { ClusterFolders, type Detached, type KindRecord } from "./state-folder.ts";
import { stderrSummary } from "./stderr.ts";

/** In a cluster's folder while it is asked to sleep (contract 1.6): its stopped nodes are `hibernated`, not lost. */
const HIBERNATED_FILE = "hibernated";
/** In a cluster's folder from a wake until its API server answers again. */
const WAKING_FILE = "waking";

/** A kind cluster's API server URLs: the host's published port, and the node's address on the Docker network. */
interface KindEndpoints {
  readonly external: string;
  readonly internal: string;
}

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
 * again after a wait ({@link CREATE_ATTEMPTS} in all), then stays failed until the Cluster is deleted; an
 * interrupted one (its process gone with no exit status, e.g. with the engine's Pod) is reported absent, and
 * the next create removes what it left and starts over. A cluster deleted behind the engine's back is
 * reported absent, and the engine's next `create` builds it again.
 *
 * Hibernation (contract 1.6, with the Docker CLI): `hibernate` writes `hibernated` into the cluster's folder, then
 * `docker stop`s its node containers; `wake` writes `waking`, `docker start`s the same containers and removes
 * `hibernated`. Containers, their volumes and the host port of the API server stay: kind picks that port at create
 * time and publishes it as a fixed `--publish=127.0.0.1:<port>:6443`, so a started container gets it again (same
 * endpoint; the CA and keys live in the node's filesystem). Containers stopped while no `hibernated` file says so
 * were stopped by someone else: not serving (`provisioning` with a message), as before.
 */
export class KindBackend implements ClusterBackend {
  readonly name = "kind";
  /** Real API servers: admin access, and OIDC trust through kube-apiserver's authentication configuration. */
  readonly capabilities = { adminAccess: true, oidc: true } as const;
  readonly #cli: KindCli;
  readonly #folders: ClusterFolders;
  readonly #waitMs: number;
  readonly #log: Logger;
  readonly #clock: Clock;
  /** Server URLs already read, by kind name; valid for the create named by `createdBy` (pid and start). */
  readonly #endpoints = new Map<string, { readonly createdBy: string; readonly endpoints: KindEndpoints }>();
  readonly #access: KindAccess;
  /** The node image versions the Docker engine held at the last look (load, then each offer read). */
  #held: readonly SupportedVersion[];
  /** Commands on one cluster run one after another within this instance. */
  readonly #lock = new KeyedLock();
  readonly #retryDelayMs: number;
  readonly #line: CreateLine;
  /** MetalLB for the clusters it creates ({@link KindBackendOptions.metallb}). */
  readonly #metallb: { readonly images: MetallbImages; readonly installs: MetallbInstalls } | undefined;
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
  /** Contract 1.6, only with the Docker CLI (it stops and starts the node containers); see the class comment. */
  readonly hibernate?: (target: ClusterTarget) => Promise<void>;
  readonly wake?: (target: ClusterTarget) => Promise<void>;
  /** Contract 1.7, only with the Docker CLI (etcd's snapshot and the keys come out of the node); see snapshots.ts. */
  readonly snapshot?: (target: ClusterTarget, reference: SnapshotReference) => Promise<SnapshotManifest>;
  readonly restore?: (target: ClusterTarget, reference: SnapshotReference) => Promise<void>;
  /** The Docker CLI and a runner patient enough for a restore (etcd stopped, restored, kube-apiserver ready). */
  readonly #snapshotDocker: { readonly cli: string; readonly run: DockerRun } | undefined;
  readonly #stateDirectory: string;
  #etcdutl: string | undefined;

  constructor(options: KindBackendOptions) {
    const docker = options.docker;
    this.#cli = new KindCli(options.kind, docker, options.commandTimeoutMs ?? 300_000, options.newestMinor);
    this.#clock = options.clock ?? systemClock;
    this.#folders = new ClusterFolders(join(options.stateDirectory, "clusters"), this.#clock);
    this.#waitMs = options.waitMs ?? 300_000;
    this.#access = options.access ?? "host";
    this.#retryDelayMs = options.retryDelayMs ?? 30_000;
    this.#held = options.localVersions ?? [];
    this.#log = options.log ?? silentLogger;
    if (options.metallb && !docker)
      throw new Error("kind backend: installing MetalLB needs the Docker CLI (the docker option)");
    const tools = { kind: options.kind, docker: docker ?? "docker" };
    this.#metallb = options.metallb && {
      images: options.metallb,
      installs: new MetallbInstalls(this.#folders, tools, options.network ?? "kind", this.#log),
    };
    const authn = options.authn ?? (docker ? "volume" : "folder");
    if (authn === "volume" && !docker)
      throw new Error("kind backend: authn volume needs the Docker CLI (the docker option)");
    this.#volumes = authn === "volume" && docker ? new AuthnVolumes(dockerRunner(docker)) : undefined;
    mkdirSync(this.#folders.directory, { recursive: true });
    this.#ledger = folderPoolLedger(join(options.stateDirectory, "pool"));
    this.#line = new CreateLine({
      parallelCreates: options.parallelCreates ?? Number.POSITIVE_INFINITY,
      running: () => this.#runningCreates(),
      start: (order) => this.#startCreate(order),
      recordQueued: (order) => recordQueued(order, this.#folders),
      stillQueued: (cluster) => this.#folders.readRecord(cluster)?.queued === true,
      lock: this.#lock,
      log: this.#log,
    });
    this.#stateDirectory = resolve(options.stateDirectory);
    this.#etcdutl = options.etcdutl;
    this.#snapshotDocker = docker ? { cli: docker, run: dockerRunner(docker, 600_000) } : undefined;
    if (docker) {
      this.hibernate = (target) => this.#hibernate(target);
      this.wake = (target) => this.#wake(target);
      this.snapshot = (target, reference) => this.#snapshot(target, reference);
      this.restore = (target, reference) => this.#restore(target, reference);
    }
    this.pools = ledgerPools({
      backend: this,
      ledger: this.#ledger,
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
    if ((config.spec.supportedVersions ?? []).length > 0 || this.#cli.docker === undefined)
      return { versions: this.supportedVersions(config), traits };
    this.#held = await listNodeImages(this.#cli.docker, await this.#cli.newestMinor());
    return { versions: this.supportedVersions(config), traits };
  }

  traits(config: ProviderConfig): readonly string[] {
    return config.spec.traits ?? [];
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const cluster = this.#nameOf(target);
    const record = this.#folders.readRecord(cluster) ?? (await this.#recover(target, cluster));
    if (!record) return { exists: false }; // a kind cluster without our record is not ours to report
    const creating = creatingObservation(this.#createState(record), record, this.#clock.now(), () =>
      this.#line.viewOf(cluster),
    );
    if (creating) return creating;
    if (!(await this.#cli.listClusters()).includes(cluster)) return { exists: false }; // deleted behind our back
    if (existsSync(this.#folders.path(cluster, HIBERNATED_FILE))) {
      this.#endpoints.delete(cluster);
      const running = (await this.#cli.nodeStates(cluster)).filter((node) => node.state === "running");
      return running.length === 0
        ? {
            ...recordedCluster(record),
            phase: "hibernated",
            info: `kind cluster ${cluster} asleep (nodes stopped)`,
          }
        : {
            ...recordedCluster(record),
            phase: "hibernating",
            message: `its node containers still run: ${running.map((node) => node.name).join(", ")}`,
          };
    }
    const stopped = await this.#cli.stoppedNodes(cluster);
    if (stopped.length > 0) {
      this.#endpoints.delete(cluster); // started again, a node may be published on another port
      const message = `its node containers do not run: ${stopped.join(", ")}; start them again (docker start)`;
      return { ...recordedCluster(record), phase: "provisioning", message };
    }
    const waking = this.#folders.path(cluster, WAKING_FILE);
    if (existsSync(waking)) {
      if (!(await this.#cli.apiServerReady(cluster)))
        return { ...recordedCluster(record), phase: "waking", message: "its API server is starting" };
      rmSync(waking, { force: true }); // awake: a mark of this backend's own, not the cluster
    }
    let ready: ClusterObservation & { exists: true };
    try {
      const { external, internal } = await this.#endpointsOf(record);
      ready = { ...recordedCluster(record), phase: "ready", endpoint: external, internalEndpoint: internal };
    } catch (error) {
      return { ...recordedCluster(record), phase: "provisioning", message: (error as Error).message };
    }
    if (this.#clonePending(cluster))
      return {
        ...ready,
        phase: "provisioning",
        incomplete: "the snapshot's data is not restored into it yet",
      };
    if (!this.#metallb || !this.#installsInto(record)) return ready;
    // Ready once MetalLB is installed (or failed to be: the condition says why); `create` starts the install.
    const metallb = this.#metallb.installs.state(cluster);
    const conditions = [metallbCondition(metallb, this.#metallb.installs.pool(cluster))];
    if (metallb.kind === "absent")
      return { ...ready, phase: "provisioning", incomplete: "MetalLB is not installed yet", conditions };
    if (metallb.kind === "running") return { ...ready, phase: "provisioning", conditions };
    return { ...ready, conditions };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    const cluster = this.#nameOf(target);
    const image = kindNodeImage(version, target.settings, target.providerConfig);
    const extraMounts = kindExtraMounts(target.settings, target.providerConfig);
    await this.#lock.run(cluster, async () => {
      const record = this.#folders.readRecord(cluster) ?? (await this.#recover(target, cluster));
      const call = {
        ...(record ? { record, state: this.#createState(record) } : {}),
        named: target.annotations?.[KIND_NAME_ANNOTATION] === cluster,
      };
      let step = nextCreateStep(call);
      if (step.kind === "look")
        step = nextCreateStep({ ...call, listed: (await this.#cli.listClusters()).includes(cluster) });
      // A clone (contract 1.7) starts from the snapshot's keys; its data follows once kind made it ("complete").
      const seedPki =
        step.kind === "start" && target.restoreFrom
          ? await this.#stageClone(cluster, target.restoreFrom)
          : undefined;
      const order = { target, cluster, version, image, extraMounts, ...(seedPki ? { seedPki } : {}) };
      await this.#take(step, order, record);
    });
  }

  /** Does what {@link nextCreateStep} decided for the create of `order`. */
  async #take(step: CreateStep, order: Omit<CreateOrder, "attempt">, record?: KindRecord): Promise<void> {
    const { target, cluster } = order;
    switch (step.kind) {
      case "start": {
        const { attempt, lastFailure, leftovers } = step;
        if (leftovers) await this.#removeLeftovers(cluster, leftovers, attempt, lastFailure);
        this.#line.startOrQueue({ ...order, attempt, ...(lastFailure === undefined ? {} : { lastFailure }) });
        return;
      }
      case "complete": // what is left to make is a clone's data, MetalLB, or it is whole
        if (this.#clonePending(cluster)) await this.#finishClone(target, cluster);
        if (this.#metallb && record && this.#lacksMetallb(record))
          await this.#metallb.installs.start(target, cluster, this.#metallb.images);
        return;
      case "adopt":
        return adoptCluster(this.#recoveryTools(), target, cluster, order.version);
      case "refuse":
        throw new Error(
          `a kind cluster named ${cluster} exists but this backend has no record of it (was its state folder lost?); delete the Cluster ${target.namespace}/${target.name}, or run \`kind delete cluster --name ${cluster}\``,
        );
    }
  }

  /** Removes what a failed or interrupted create left, before it starts over. */
  async #removeLeftovers(
    cluster: string,
    leftovers: "failed" | "interrupted",
    attempt: number,
    failure: string | undefined,
  ): Promise<void> {
    if (leftovers === "failed")
      this.#log.warn("kind create failed; removing what it left and trying again", {
        cluster,
        attempt,
        failure,
      });
    else this.#log.info("kind create was interrupted; removing what it left and creating again", { cluster });
    const kubeconfig = this.#folders.path(cluster, "kubeconfig");
    await this.#cli.run(["delete", "cluster", "--name", cluster, "--kubeconfig", kubeconfig]);
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const cluster = this.#nameOf(target);
    const record = this.#folders.readRecord(cluster);
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
      await this.#lock.run(cluster, () => this.#deleteCluster(target, cluster));
      // Its records last: a crash before leaves a member its pool finds and deletes again.
      if (this.#ledger.member(key)) this.#ledger.forget(key);
    } finally {
      this.#deleting.delete(cluster);
    }
  }

  /** Removes the kind cluster and its folder (an adopted one is only forgotten). */
  async #deleteCluster(target: ClusterTarget, cluster: string): Promise<void> {
    const record = this.#folders.readRecord(cluster);
    const folder = this.#folders.folder(cluster);
    const metallb = this.#metallb?.installs.state(cluster) ?? { kind: "absent" };
    const plan = deletePlan(record, record && this.#createState(record), metallb);
    if (plan.kind === "forget") {
      rmSync(folder, { recursive: true, force: true });
      this.#endpoints.delete(cluster);
      this.#log.info("adopted kind cluster left running; the Cluster no longer describes it", {
        cluster,
        target: describeCluster(target),
      });
      return;
    }
    this.#line.remove(cluster);
    for (const command of plan.stop) await stopProcessGroup(this.#leaderOf(cluster, command, record), 10_000);
    // kind edits the kubeconfig it is given (and would make its folder): keep it away from ~/.kube/config.
    mkdirSync(folder, { recursive: true });
    await this.#cli.delete(cluster, this.#folders.path(cluster, "kubeconfig"));
    // Its volume after its node (Docker keeps a volume a container uses); there is none in folder mode.
    await this.#volumes?.remove(cluster);
    this.#endpoints.delete(cluster);
    rmSync(folder, { recursive: true, force: true });
    rmSync(this.#cloneStaging(cluster), { recursive: true, force: true });
    if (record) this.#log.info("kind cluster deleted", { cluster, target: describeCluster(target) });
  }

  /** Stops the node containers once the wish to sleep is recorded (idempotent; refused while the create runs). */
  async #hibernate(target: ClusterTarget): Promise<void> {
    const cluster = this.#nameOf(target);
    await this.#lock.run(cluster, async () => {
      const record = this.#folders.readRecord(cluster);
      if (!record)
        throw new Error(
          `cannot hibernate ${describeCluster(target)}: the kind backend holds no such cluster`,
        );
      const state = this.#createState(record).kind;
      if (state !== "succeeded")
        throw new Error(`cannot hibernate ${describeCluster(target)} while its create is ${state}`);
      writeFileSync(
        this.#folders.path(cluster, HIBERNATED_FILE),
        `${new Date(this.#clock.now()).toISOString()}\n`,
      );
      rmSync(this.#folders.path(cluster, WAKING_FILE), { force: true });
      this.#endpoints.delete(cluster);
      await this.#cli.stopOrStartNodes(cluster, "stop");
      this.#log.info("kind cluster hibernated: node containers stopped", {
        cluster,
        target: describeCluster(target),
      });
    });
  }

  /** Starts the same node containers again (idempotent: a cluster awake or waking is left as it is). */
  async #wake(target: ClusterTarget): Promise<void> {
    const cluster = this.#nameOf(target);
    await this.#lock.run(cluster, async () => {
      const asleep = this.#folders.path(cluster, HIBERNATED_FILE);
      if (!existsSync(asleep)) return;
      // `waking` first and `hibernated` last: a crash in between leaves it asleep, and a wake again finishes.
      writeFileSync(
        this.#folders.path(cluster, WAKING_FILE),
        `${new Date(this.#clock.now()).toISOString()}\n`,
      );
      await this.#cli.stopOrStartNodes(cluster, "start");
      rmSync(asleep, { force: true });
      this.#log.info("kind cluster woken: node containers started", {
        cluster,
        target: describeCluster(target),
      });
    });
  }

  /**
   * Takes a snapshot of a ready, awake kind cluster (contract 1.7): etcd's consistent snapshot and kubeadm's keys,
   * out of its control-plane node (see snapshots.ts). The cluster keeps serving. Idempotent by the snapshot's name.
   */
  async #snapshot(target: ClusterTarget, reference: SnapshotReference): Promise<SnapshotManifest> {
    const observed = await this.observe(target);
    if (!observed.exists || observed.phase !== "ready")
      throw new Error(
        `kind backend: ${describeCluster(target)} is ${observed.exists ? observed.phase : "missing"}: a snapshot needs it ready and awake`,
      );
    const description = describeSnapshot(this.name, target, {
      endpoint: observed.endpoint,
      kubernetesVersion: observed.version,
      takenAtMs: this.#clock.now(),
    });
    const node = nodeOf(this.#nameOf(target));
    return writeSnapshot(
      reference,
      description,
      nodeSnapshotFiles(this.#docker(), node),
      this.#snapshotStaging(),
    );
  }

  /**
   * Rolls the kind cluster back to a snapshot in place (contract 1.7): its node, endpoint, CA and keys stay; etcd's
   * data becomes the snapshot's. Refused ({@link SnapshotRejectedError}, nothing changed) for a snapshot unfinished,
   * altered, of another backend or of another cluster. Returns once kube-apiserver serves the restored data; a
   * restore cut short leaves etcd and kube-apiserver stopped until a restore again finishes.
   */
  async #restore(target: ClusterTarget, reference: SnapshotReference): Promise<void> {
    const cluster = this.#nameOf(target);
    const docker = this.#docker();
    await this.#lock.run(cluster, async () => {
      if (existsSync(this.#folders.path(cluster, HIBERNATED_FILE)))
        throw new Error(
          `kind backend: ${describeCluster(target)} is hibernated: wake it before restoring a snapshot`,
        );
      const stored = await readOwnSnapshot(reference, this.name, this.#snapshotStaging());
      try {
        const node = nodeOf(cluster);
        await requireNodeKeys(docker.run, node, stored);
        this.#etcdutl ??= builtEtcdutl();
        await rollBackNode(docker.run, node, stored.path(NODE_ETCD_SNAPSHOT_FILE), this.#etcdutl);
      } finally {
        await stored.release();
      }
      this.#log.info("kind cluster rolled back to a snapshot", {
        cluster,
        target: describeCluster(target),
        snapshot: reference.name,
      });
    });
  }

  /** Where a clone's snapshot waits for its cluster: the keys its node starts from, and etcd's data. */
  #cloneStaging(cluster: string): string {
    return join(this.#stateDirectory, "clones", cluster);
  }

  #clonePending(cluster: string): boolean {
    return existsSync(join(this.#cloneStaging(cluster), "staged"));
  }

  /**
   * Checks snapshot `reference` (refused: nothing made) and stages what the clone `cluster` is made from, once (a
   * create tried again finds it staged); returns the keys' folder.
   */
  async #stageClone(cluster: string, reference: SnapshotReference): Promise<string> {
    const folder = this.#cloneStaging(cluster);
    if (this.#clonePending(cluster)) return join(folder, "pki");
    const stored = await readOwnSnapshot(reference, this.name, this.#snapshotStaging());
    try {
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      await writeSeedPki(stored, join(folder, "pki"));
      await copyFile(stored.path(NODE_ETCD_SNAPSHOT_FILE), join(folder, NODE_ETCD_SNAPSHOT_FILE));
      writeFileSync(join(folder, "staged"), `${reference.name}\n`);
    } finally {
      await stored.release();
    }
    return join(folder, "pki");
  }

  /** Rolls the made clone's etcd to the snapshot's data, then drops the staging (its node keeps its own keys). */
  async #finishClone(target: ClusterTarget, cluster: string): Promise<void> {
    const folder = this.#cloneStaging(cluster);
    this.#etcdutl ??= builtEtcdutl();
    const etcd = join(folder, NODE_ETCD_SNAPSHOT_FILE);
    await seedCloneNode(this.#docker().run, nodeOf(cluster), etcd, this.#etcdutl);
    rmSync(folder, { recursive: true, force: true });
    this.#log.info("kind cluster made from a snapshot", { cluster, target: describeCluster(target) });
  }

  #docker(): { readonly cli: string; readonly run: DockerRun } {
    if (!this.#snapshotDocker)
      throw new Error("kind backend: snapshots need the Docker CLI (the docker option)");
    return this.#snapshotDocker;
  }

  /** Where a snapshot kept in an object store is made before its upload and checked after its download. */
  #snapshotStaging(): string {
    return join(this.#stateDirectory, "snapshot-staging");
  }

  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    const observation = observed ?? (await this.observe(target));
    if (!observation.exists || observation.phase !== "ready") return undefined;
    return { kubeconfig: await this.#cli.kubeconfig(this.#nameOf(target), this.#access === "network") };
  }

  /** Trusts `issuers` in the cluster's kube-apiserver (see {@link trustIssuers}). */
  async trustOidcIssuers(target: ClusterTarget, issuers: readonly OidcTrust[]): Promise<void> {
    const cluster = this.#nameOf(target);
    const record = this.#folders.readRecord(cluster);
    const where = { folder: this.#folders.path(cluster, "authn"), volumes: this.#volumes };
    await trustIssuers(target, cluster, record, issuers, where);
  }

  /** The cluster's folder, for the engine it moves to (contract 1.5). */
  async exportCluster(target: ClusterTarget): Promise<Readonly<Record<string, string>>> {
    const cluster = this.#nameOf(target);
    const record = this.#folders.readRecord(cluster);
    if (!record) return {};
    const folder = this.#folders.folder(cluster);
    return exportKindCluster(target, cluster, folder, this.#createState(record), this.#ledger);
  }

  /** Takes over another instance's folder of the cluster (contract 1.5); files this instance has stay. */
  async importCluster(target: ClusterTarget, entries: Readonly<Record<string, string>>): Promise<void> {
    // The pool binding first: it decides the kind cluster's name.
    const state = importPoolMember(target, entries, this.#ledger);
    const cluster = this.#nameOf(target);
    importKindCluster(target, cluster, this.#folders.folder(cluster), state);
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
    return existsSync(this.#folders.path(former, "record.json"))
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

  /** The wrapper of the cluster's create or MetalLB install, as a stop knows it (see {@link #spawned}). */
  #leaderOf(cluster: string, command: Detached, record: KindRecord | undefined): GroupLeader {
    const pid = command === "create" ? (record?.pid ?? 0) : (this.#metallb?.installs.pid(cluster) ?? 0);
    return this.#spawned.has(pid) ? { pid } : { pid, marker: this.#folders.exitFile(cluster, command) };
  }

  /** Whether this backend installs MetalLB into the cluster: not into one it adopted or took over. */
  #installsInto(record: KindRecord): boolean {
    return this.#metallb !== undefined && !record.adopted && !record.takenOver;
  }

  /** Whether MetalLB is to be installed into the cluster and its install has not started (or was interrupted). */
  #lacksMetallb(record: KindRecord): boolean {
    return this.#installsInto(record) && this.#metallb?.installs.state(record.cluster).kind === "absent";
  }

  #recover(target: ClusterTarget, cluster: string): Promise<KindRecord | undefined> {
    return recoverRecord(this.#recoveryTools(), target, cluster, this.#ledger.keyOf(target.uid));
  }

  #recoveryTools(): RecoveryTools {
    return { cli: this.#cli, volumes: this.#volumes, folders: this.#folders, log: this.#log };
  }

  /** Where the record's create is: its exit status, else whether its wrapper runs. */
  #createState(record: KindRecord): CreateState {
    const { cluster } = record;
    const exitFile = this.#folders.exitFile(cluster, "create");
    const seen = {
      record,
      inLine: this.#line.has(cluster),
      exit: this.#folders.exitStatus(cluster, "create", () => this.#alive(record.pid, exitFile)),
      exitedAt: this.#folders.exitedAt(cluster, "create"),
      stderr: () => stderrSummary(this.#folders.text(cluster, "create.stderr"), 5),
    };
    return createStateOf(seen, this.#clock.now(), this.#retryDelayMs);
  }

  /** The `kind create cluster` processes running on this Docker host from this state folder. */
  #runningCreates(): number {
    let running = 0;
    for (const cluster of this.#folders.clusters()) {
      const record = this.#folders.readRecord(cluster);
      if (record && this.#createState(record).kind === "running") running++;
    }
    return running;
  }

  #startCreate(order: CreateOrder): void {
    const { target, cluster, image } = order;
    const pid = startCreate(order, {
      folders: this.#folders,
      kind: this.#cli.kind,
      docker: this.#cli.docker ?? "docker",
      ...(this.#volumes ? { volume: { uid: this.#ledger.keyOf(target.uid) } } : {}),
      waitMs: this.#waitMs,
    });
    this.#spawned.add(pid);
    this.#log.info("kind create started", { cluster, image, pid, target: describeCluster(target) });
  }

  /** The cluster's API server as the host and as the Docker network reach it (read once per create). */
  async #endpointsOf(record: KindRecord): Promise<KindEndpoints> {
    const createdBy = `${record.pid}@${record.startedAt}`;
    const cached = this.#endpoints.get(record.cluster);
    if (cached?.createdBy === createdBy) return cached.endpoints;
    const endpoints = {
      external: await this.#cli.server(record.cluster, false),
      internal: await this.#cli.server(record.cluster, true),
    };
    this.#endpoints.set(record.cluster, { createdBy, endpoints });
    return endpoints;
  }
}
