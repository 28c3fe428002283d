/** The `simulated` backend: clusters that exist only in memory (optionally in a file), with delays and faults. */
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { AdminAccess, BackendContext, BackendFactory, ClusterBackend } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import { parseDuration } from "../api/duration.ts";
import type { ProviderConfig } from "../api/provider-config.ts";

/** Knobs of the simulation. */
export interface SimulatedBackendOptions {
  /** How long a new cluster takes to become ready. Default 3 s. */
  readonly provisionDelayMs?: number;
  /** How long an update takes. Default 2 s. */
  readonly updateDelayMs?: number;
  /** How long a deletion takes. Default 2 s. */
  readonly deleteDelayMs?: number;
  /** Probability (0–1) that a command fails before doing anything. Default 0. */
  readonly failureRate?: number;
  /** Keep the clusters in this JSON file, so they outlive the process (kill -9 included). */
  readonly stateFile?: string;
  readonly clock?: Clock;
  /** Source of randomness for faults; default Math.random. */
  readonly random?: () => number;
}

/** Versions offered when a ProviderConfig lists none. */
export const SIMULATED_DEFAULT_VERSIONS: readonly SupportedVersion[] = [
  { version: "1.34.2" },
  { version: "1.33.6" },
  { version: "1.32.10", deprecated: true },
];

interface SimulatedCluster {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly version: string;
  readonly phase: "provisioning" | "updating" | "deleting";
  /** When the current phase began (ms since epoch); the phase completes after its delay. */
  readonly since: number;
}

/** A {@link ClusterBackend} that simulates clusters; commands are idempotent, keyed by Cluster uid. */
export class SimulatedBackend implements ClusterBackend {
  readonly name = "simulated";
  /** Its clusters are not real: there is nothing to grant access to. */
  readonly capabilities = { adminAccess: false, oidc: false } as const;
  readonly #options: Required<Omit<SimulatedBackendOptions, "stateFile">> & { stateFile: string | undefined };
  readonly #clusters = new Map<string, SimulatedCluster>();
  #created = 0;
  /** Modification time of the state file as last read or written. */
  #loadedAt = -1;

  constructor(options: SimulatedBackendOptions = {}) {
    this.#options = {
      provisionDelayMs: options.provisionDelayMs ?? 3_000,
      updateDelayMs: options.updateDelayMs ?? 2_000,
      deleteDelayMs: options.deleteDelayMs ?? 2_000,
      failureRate: options.failureRate ?? 0,
      stateFile: options.stateFile,
      clock: options.clock ?? systemClock,
      random: options.random ?? Math.random,
    };
    this.#load();
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

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    this.#load();
    const cluster = this.#clusters.get(target.uid);
    if (!cluster) return { exists: false };
    const done = this.#options.clock.now() >= cluster.since + this.#delayOf(cluster.phase);
    if (cluster.phase === "deleting" && done) return { exists: false };
    const phase = done ? "ready" : cluster.phase;
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
    this.#load();
    this.#maybeFail("create", target);
    const existing = await this.observe(target);
    if (existing.exists && existing.phase !== "deleting") return; // idempotent: one cluster per Cluster uid
    this.#created++;
    this.#put({ ...targetKey(target), version, phase: "provisioning", since: this.#options.clock.now() });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    this.#load();
    this.#maybeFail("update", target);
    const cluster = this.#clusters.get(target.uid);
    if (!cluster)
      throw new Error(`cannot update ${describe(target)}: the simulated backend holds no such cluster`);
    if (cluster.version === version || cluster.phase === "deleting") return;
    this.#put({ ...cluster, version, phase: "updating", since: this.#options.clock.now() });
  }

  async delete(target: ClusterTarget): Promise<void> {
    this.#load();
    this.#maybeFail("delete", target);
    const observed = await this.observe(target);
    const cluster = this.#clusters.get(target.uid);
    if (!cluster) return;
    if (!observed.exists) {
      this.#clusters.delete(target.uid); // its deletion completed: forget it
      this.#save();
      return;
    }
    if (cluster.phase === "deleting") return;
    this.#put({ ...cluster, phase: "deleting", since: this.#options.clock.now() });
  }

  /** How many clusters exist right now (those whose deletion completed do not count). */
  get size(): number {
    this.#load();
    const now = this.#options.clock.now();
    return [...this.#clusters.values()].filter(
      (cluster) => cluster.phase !== "deleting" || now < cluster.since + this.#options.deleteDelayMs,
    ).length;
  }

  /** How many clusters were ever created, across restarts when a state file is used. */
  get createdTotal(): number {
    this.#load();
    return this.#created;
  }

  #delayOf(phase: SimulatedCluster["phase"]): number {
    if (phase === "provisioning") return this.#options.provisionDelayMs;
    if (phase === "updating") return this.#options.updateDelayMs;
    return this.#options.deleteDelayMs;
  }

  #maybeFail(command: string, target: ClusterTarget): void {
    if (this.#options.failureRate > 0 && this.#options.random() < this.#options.failureRate) {
      throw new Error(
        `simulated fault: ${command} of ${describe(target)} failed (failureRate ${this.#options.failureRate})`,
      );
    }
  }

  #put(cluster: SimulatedCluster): void {
    this.#clusters.set(cluster.uid, cluster);
    this.#save();
  }

  /**
   * Reads the state file if it changed since we last read or wrote it: another process (a previous
   * leader, or the one before a restart) may have written it, and its word counts.
   */
  #load(): void {
    const file = this.#options.stateFile;
    if (!file) return;
    let text: string;
    try {
      const modified = statSync(file).mtimeMs;
      if (modified === this.#loadedAt) return;
      text = readFileSync(file, "utf8");
      this.#loadedAt = modified;
    } catch {
      return; // no state yet
    }
    const parsed = JSON.parse(text) as { clusters?: SimulatedCluster[]; created?: number };
    this.#clusters.clear();
    for (const cluster of parsed.clusters ?? []) this.#clusters.set(cluster.uid, cluster);
    this.#created = parsed.created ?? 0;
  }

  /** Writes the whole state atomically (temp file + rename), so a kill -9 leaves the old or the new state. */
  #save(): void {
    const file = this.#options.stateFile;
    if (!file) return;
    writeFileSync(
      `${file}.tmp`,
      JSON.stringify({ created: this.#created, clusters: [...this.#clusters.values()] }, null, 2),
    );
    renameSync(`${file}.tmp`, file);
    this.#loadedAt = statSync(file).mtimeMs;
  }
}

function targetKey(target: ClusterTarget) {
  return { uid: target.uid, namespace: target.namespace, name: target.name };
}

function describe(target: ClusterTarget): string {
  return `cluster ${target.namespace}/${target.name}`;
}

/**
 * The `simulated` backend from `--backend-option`s: `delay` (all phases, e.g. `3s`), `provisionDelay`,
 * `updateDelay`, `deleteDelay`, `failureRate` (0–1). State lives in `simulated.json` in the state folder.
 */
export const createBackend: BackendFactory = (context: BackendContext) => {
  const { options } = context;
  const delay = options.delay === undefined ? undefined : parseMs("delay", options.delay);
  const pick = (name: string) =>
    options[name] === undefined ? delay : parseMs(name, options[name] as string);
  const failureRate = options.failureRate === undefined ? 0 : Number(options.failureRate);
  if (!(failureRate >= 0 && failureRate <= 1)) {
    throw new Error(`simulated backend: failureRate "${options.failureRate}" must be a number from 0 to 1`);
  }
  const provisionDelayMs = pick("provisionDelay");
  const updateDelayMs = pick("updateDelay");
  const deleteDelayMs = pick("deleteDelay");
  return new SimulatedBackend({
    ...(provisionDelayMs === undefined ? {} : { provisionDelayMs }),
    ...(updateDelayMs === undefined ? {} : { updateDelayMs }),
    ...(deleteDelayMs === undefined ? {} : { deleteDelayMs }),
    failureRate,
    stateFile: `${context.stateDirectory}/simulated.json`,
    clock: context.clock,
  });
};

function parseMs(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw new Error(`simulated backend: ${name} "${value}" is not a duration like 500ms, 3s or 1m`);
  return ms;
}

/** `settings.failureDomains: [zone, …]` of the ProviderConfig: simulated places for control plane machines. */
function failureDomainsOf(
  target: ClusterTarget,
): Pick<Extract<ClusterObservation, { exists: true }>, "failureDomains"> {
  const listed = target.settings?.failureDomains;
  if (!Array.isArray(listed)) return {};
  const names = listed.filter((name): name is string => typeof name === "string" && name !== "");
  return names.length > 0 ? { failureDomains: names.map((name) => ({ name, controlPlane: true })) } : {};
}
