/** The `simulated` backend: clusters that exist only in memory (optionally in a file), with delays and faults. */

import { join } from "node:path";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  PoolSupport,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { describeCluster } from "./shared/error-wording.ts";
import { ledgerPools } from "./shared/ledger-pools.ts";
import { folderPoolLedger, memoryPoolLedger, type PoolLedger } from "./shared/pool-ledger.ts";
import { durationOption } from "./shared/settings.ts";
import { folderStore, memoryStore, type SimulatedRecord, type SimulatedStore } from "./simulated-store.ts";

/** Knobs of the simulation. */
export interface SimulatedBackendOptions {
  /** How long a new cluster takes to become ready. Default 3 s. */
  readonly provisionDelayMs?: number;
  /** How long an update takes. Default 2 s. */
  readonly updateDelayMs?: number;
  /** How long a deletion takes. Default 2 s. */
  readonly deleteDelayMs?: number;
  /** How long going to sleep takes (contract 1.6). Default: as long as a deletion. */
  readonly hibernateDelayMs?: number;
  /** How long waking takes (contract 1.6). Default: as long as provisioning. */
  readonly wakeDelayMs?: number;
  /** Probability (0–1) that a command fails before doing anything. Default 0. */
  readonly failureRate?: number;
  /** Versions an update to which ends in `failed` after the update delay (a bad release, for rollouts). Default none. */
  readonly failingVersions?: readonly string[];
  /** Keep the clusters in this folder (a file each), so they outlive the process (kill -9 included). */
  readonly stateDirectory?: string;
  readonly clock?: Clock;
  /** Where pool members and bindings are recorded; default beside the clusters (the state folder, else memory). */
  readonly poolLedger?: PoolLedger;
  /** Source of randomness for faults; default Math.random. */
  readonly random?: () => number;
}

/** Versions offered when a ProviderConfig lists none. */
export const SIMULATED_DEFAULT_VERSIONS: readonly SupportedVersion[] = [
  { version: "1.34.2" },
  { version: "1.33.6" },
  { version: "1.32.10", deprecated: true },
];

type SimulatedCluster = SimulatedRecord;

/** The entry of an exported cluster that holds its record. */
const RECORD_KEY = "record.json";

/** A {@link ClusterBackend} that simulates clusters; commands are idempotent, keyed by Cluster uid. */
export class SimulatedBackend implements ClusterBackend {
  readonly name = "simulated";
  /** Its clusters are not real: there is nothing to grant access to. */
  readonly capabilities = { adminAccess: false, oidc: false } as const;
  readonly #options: Required<Omit<SimulatedBackendOptions, "stateDirectory" | "poolLedger">>;
  readonly #store: SimulatedStore;
  readonly #ledger: PoolLedger;
  /** Warm pools (contract 1.5): a member is a record like any other, keyed by its id; a binding leads a Cluster's uid to it. */
  readonly pools: PoolSupport;

  constructor(options: SimulatedBackendOptions = {}) {
    this.#options = {
      provisionDelayMs: options.provisionDelayMs ?? 3_000,
      updateDelayMs: options.updateDelayMs ?? 2_000,
      deleteDelayMs: options.deleteDelayMs ?? 2_000,
      hibernateDelayMs: options.hibernateDelayMs ?? options.deleteDelayMs ?? 2_000,
      wakeDelayMs: options.wakeDelayMs ?? options.provisionDelayMs ?? 3_000,
      failureRate: options.failureRate ?? 0,
      failingVersions: options.failingVersions ?? [],
      clock: options.clock ?? systemClock,
      random: options.random ?? Math.random,
    };
    this.#store = options.stateDirectory ? folderStore(options.stateDirectory) : memoryStore();
    this.#ledger =
      options.poolLedger ??
      (options.stateDirectory ? folderPoolLedger(join(options.stateDirectory, "pool")) : memoryPoolLedger());
    this.pools = {
      ...ledgerPools({
        backend: this,
        ledger: this.#ledger,
        leaving: (_, observation) => observation.exists && observation.phase === "deleting",
      }),
      deleteMember: async (id) => {
        await this.delete(poolMemberTarget(id));
        // A member whose cluster is gone already is forgotten now; one being deleted, once that completes.
        if (!this.#store.get(id)) this.#ledger.forget(id);
      },
    };
  }

  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    const listed = config.spec.supportedVersions ?? [];
    return listed.length > 0 ? listed : SIMULATED_DEFAULT_VERSIONS;
  }

  traits(config: ProviderConfig): readonly string[] {
    return config.spec.traits ?? [];
  }

  async adminAccess(_target: ClusterTarget): Promise<AdminAccess | undefined> {
    return undefined;
  }

  /** Reads one record; a cluster whose deletion has completed is forgotten (its record pruned), never infrastructure. */
  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const key = this.#ledger.keyOf(target.uid);
    const cluster = this.#store.get(key);
    if (!cluster) return { exists: false };
    const done = this.#options.clock.now() >= cluster.since + this.#delayOf(cluster.phase);
    if (cluster.phase === "deleting" && done) {
      this.#store.remove(key);
      if (this.#ledger.member(key)) this.#ledger.forget(key);
      return { exists: false };
    }
    const phase = done ? this.#completed(cluster) : cluster.phase;
    return {
      exists: true,
      phase,
      version: cluster.version,
      ...(phase === "ready" || phase === "updating"
        ? { endpoint: `https://${cluster.uid.slice(0, 8)}.${cluster.namespace}.simulated.invalid:6443` }
        : {}),
      ...failureDomainsOf(target),
    };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    this.#maybeFail("create", target);
    const existing = await this.observe(target);
    if (existing.exists && existing.phase !== "deleting") return; // idempotent: one cluster per Cluster uid
    // Noted first: a kill -9 between the two writes must not leave a cluster whose create went uncounted.
    this.#store.recordCreate(target.uid);
    this.#store.put({
      ...targetKey(target),
      uid: this.#ledger.keyOf(target.uid),
      version,
      phase: "provisioning",
      since: this.#options.clock.now(),
    });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    this.#maybeFail("update", target);
    const cluster = this.#store.get(this.#ledger.keyOf(target.uid));
    if (!cluster)
      throw new Error(
        `cannot update ${describeCluster(target)}: the simulated backend holds no such cluster`,
      );
    if (cluster.version === version || cluster.phase === "deleting") return;
    const observed = await this.observe(target);
    if (observed.exists && (observed.phase === "hibernated" || observed.phase === "hibernating"))
      throw new Error(`cannot update ${describeCluster(target)}: it is ${observed.phase}; wake it first`);
    this.#store.put({ ...cluster, version, phase: "updating", since: this.#options.clock.now() });
  }

  async delete(target: ClusterTarget): Promise<void> {
    this.#maybeFail("delete", target);
    const observed = await this.observe(target); // forgets a cluster whose deletion completed
    const cluster = this.#store.get(this.#ledger.keyOf(target.uid));
    if (!cluster || !observed.exists || cluster.phase === "deleting") return;
    this.#store.put({ ...cluster, phase: "deleting", since: this.#options.clock.now() });
  }

  /**
   * Puts a ready cluster to sleep (contract 1.6): `hibernating` for the hibernate delay, then `hibernated` until a
   * wake; the record (in the state folder, when there is one) keeps it asleep across restarts.
   */
  async hibernate(target: ClusterTarget): Promise<void> {
    const { observed, cluster } = await this.#held("hibernate", target);
    if (observed.phase === "hibernating" || observed.phase === "hibernated") return;
    if (observed.phase !== "ready" && observed.phase !== "waking")
      throw new Error(`cannot hibernate ${describeCluster(target)} while it is ${observed.phase}`);
    this.#store.put({ ...cluster, phase: "hibernating", since: this.#options.clock.now() });
  }

  /** Wakes a hibernated cluster (contract 1.6): `waking` for the wake delay, then ready at the same endpoint. */
  async wake(target: ClusterTarget): Promise<void> {
    const { observed, cluster } = await this.#held("wake", target);
    if (observed.phase === "deleting")
      throw new Error(`cannot wake ${describeCluster(target)}: it is being deleted`);
    if (observed.phase !== "hibernating" && observed.phase !== "hibernated") return; // awake, or waking
    this.#store.put({ ...cluster, phase: "waking", since: this.#options.clock.now() });
  }

  /** The cluster a sleep command acts on, as observed now and as recorded; refused when the backend holds none. */
  async #held(command: "hibernate" | "wake", target: ClusterTarget) {
    this.#maybeFail(command, target);
    const observed = await this.observe(target);
    const cluster = this.#store.get(this.#ledger.keyOf(target.uid));
    if (!cluster || !observed.exists)
      throw new Error(
        `cannot ${command} ${describeCluster(target)}: the simulated backend holds no such cluster`,
      );
    return { observed, cluster };
  }

  /** The cluster's record (contract 1.5): all the simulated backend knows of it. */
  async exportCluster(target: ClusterTarget): Promise<Readonly<Record<string, string>>> {
    const cluster = this.#store.get(target.uid);
    return cluster ? { [RECORD_KEY]: JSON.stringify(cluster) } : {};
  }

  /** Keeps the record of another instance (contract 1.5) unless this one holds the cluster already. */
  async importCluster(target: ClusterTarget, state: Readonly<Record<string, string>>): Promise<void> {
    const text = state[RECORD_KEY];
    if (text === undefined || this.#store.get(target.uid)) return;
    const record = JSON.parse(text) as SimulatedRecord;
    if (record.uid !== target.uid) {
      throw new Error(
        `simulated backend: the state handed over is of another cluster than ${describeCluster(target)}`,
      );
    }
    this.#store.put({ ...record, ...targetKey(target) });
  }

  /** How many clusters exist right now (those whose deletion completed do not count). */
  get size(): number {
    const now = this.#options.clock.now();
    return this.#store
      .all()
      .filter((cluster) => cluster.phase !== "deleting" || now < cluster.since + this.#options.deleteDelayMs)
      .length;
  }

  /** How many clusters were ever created, across restarts when a state folder is used. */
  get createdTotal(): number {
    return this.#store.created();
  }

  /** The phase a cluster reaches once its phase's delay is over. */
  #completed(cluster: SimulatedCluster): "hibernated" | "failed" | "ready" {
    if (cluster.phase === "hibernating") return "hibernated";
    if (cluster.phase === "updating" && this.#options.failingVersions.includes(cluster.version))
      return "failed";
    return "ready";
  }

  #delayOf(phase: SimulatedCluster["phase"]): number {
    if (phase === "provisioning") return this.#options.provisionDelayMs;
    if (phase === "updating") return this.#options.updateDelayMs;
    if (phase === "hibernating") return this.#options.hibernateDelayMs;
    if (phase === "waking") return this.#options.wakeDelayMs;
    if (phase === "hibernated") return Number.POSITIVE_INFINITY; // until a wake
    return this.#options.deleteDelayMs;
  }

  #maybeFail(command: string, target: ClusterTarget): void {
    if (this.#options.failureRate > 0 && this.#options.random() < this.#options.failureRate) {
      throw new Error(
        `simulated fault: ${command} of ${describeCluster(target)} failed (failureRate ${this.#options.failureRate})`,
      );
    }
  }
}

function targetKey(target: ClusterTarget) {
  return { uid: target.uid, namespace: target.namespace, name: target.name };
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `simulated` backend from `--backend-option`s: `delay` (all phases, e.g. `3s`), `provisionDelay`,
 * `updateDelay`, `deleteDelay`, `hibernateDelay`, `wakeDelay`, `failureRate` (0–1). State lives in the state folder, a file per cluster.
 */
export const createBackend: BackendFactory = (context: BackendContext) => {
  const { options } = context;
  const parse = (name: string) => durationOption(options, name, { backend: "simulated", examples });
  const delay = parse("delay");
  const pick = (name: string) => parse(name) ?? delay;
  const failureRate = options.failureRate === undefined ? 0 : Number(options.failureRate);
  if (!(failureRate >= 0 && failureRate <= 1)) {
    throw new Error(`simulated backend: failureRate "${options.failureRate}" must be a number from 0 to 1`);
  }
  const provisionDelayMs = pick("provisionDelay");
  const updateDelayMs = pick("updateDelay");
  const deleteDelayMs = pick("deleteDelay");
  const hibernateDelayMs = pick("hibernateDelay");
  const wakeDelayMs = pick("wakeDelay");
  return new SimulatedBackend({
    ...(provisionDelayMs === undefined ? {} : { provisionDelayMs }),
    ...(updateDelayMs === undefined ? {} : { updateDelayMs }),
    ...(deleteDelayMs === undefined ? {} : { deleteDelayMs }),
    ...(hibernateDelayMs === undefined ? {} : { hibernateDelayMs }),
    ...(wakeDelayMs === undefined ? {} : { wakeDelayMs }),
    failureRate,
    stateDirectory: context.stateDirectory,
    clock: context.clock,
  });
};

/** How simulated durations are written, for messages. */
const examples = "500ms, 3s or 1m";

/** `settings.failureDomains: [zone, …]` of the ProviderConfig: simulated places for control plane machines. */
function failureDomainsOf(
  target: ClusterTarget,
): Pick<Extract<ClusterObservation, { exists: true }>, "failureDomains"> {
  const listed = target.settings?.failureDomains;
  if (!Array.isArray(listed)) return {};
  const names = listed.filter((name): name is string => typeof name === "string" && name !== "");
  return names.length > 0 ? { failureDomains: names.map((name) => ({ name, controlPlane: true })) } : {};
}
