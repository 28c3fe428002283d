/** The Cluster controller: informers → work queue → pure step → guarded patches → backend commands → Events. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterCommand, ClusterObservation } from "../api/backend.ts";
import type { ClusterBackend } from "../api/backend-contract.ts";
import type { Cluster } from "../api/cluster.ts";
import type { ClusterProfile } from "../api/cluster-profile.ts";
import { LABELS, REASONS, RESOURCES } from "../api/constants.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { clusterMachine } from "../machines/cluster/machine.ts";
import {
  type ClusterStepResult,
  type ClusterTiming,
  clusterResponsibility,
  clusterTarget,
  stepCluster,
} from "../machines/cluster/step.ts";
import { applied, diff, type Json, type PatchOperation } from "../machines/shared/json-patch.ts";
import { type Clock, systemClock } from "./clock.ts";
import { controllerQueue } from "./controller-queue.ts";
import { EventRecorder, eventsWorthRecording } from "./event-recorder.ts";
import type { Informer } from "./informer.ts";
import type { EngineInformers } from "./informers.ts";
import { errorMessage, type Logger, silentLogger } from "./logger.ts";
import { type MachineObserver, tellObservers } from "./machine-observer.ts";
import type { EngineMetrics } from "./metrics.ts";
import { Outcome } from "./outcome.ts";
import { GoneError, patchObject } from "./patch-object.ts";
import type { WorkQueue } from "./work-queue.ts";

/** Defaults: poll a working backend every 2 s, retry a missing profile every 30 s, resync Ready every 10 min. */
export const DEFAULT_CLUSTER_TIMING: ClusterTiming = { pollMs: 2_000, retryMs: 30_000, resyncMs: 600_000 };

/** How to run the controller. */
export interface ClusterControllerOptions {
  readonly kubeConfig: KubeConfig;
  /** Shared caches; the controller registers handlers, the engine starts them. */
  readonly informers: EngineInformers;
  /** `--provider-name`: ClusterProfiles whose providerRef names it are ours. */
  readonly providerName: string;
  readonly backend: ClusterBackend;
  /** Different Clusters reconciled at once. Default 4. */
  readonly concurrency?: number;
  readonly timing?: ClusterTiming;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Record Kubernetes Events (default true). */
  readonly recordEvents?: boolean;
  /** Where reconcile and queue metrics go. */
  readonly metrics?: EngineMetrics;
  /** Told about every committed machine step (inspector, live view). */
  readonly observers?: readonly MachineObserver[];
  /** Told after every reconcile, for progress displays and tests. */
  readonly onReconciled?: (key: string, result: ClusterStepResult) => void;
}

/** At most this many step → command → observe rounds in one reconcile (a zero-delay backend needs two). */
const MAX_ROUNDS = 3;

/**
 * Guarantees: never two reconciles of one Cluster at once; no write when the step finds nothing to
 * change; the finalizer is stored before any backend command; every patch is guarded by the
 * resourceVersion it was computed from; no backend call for Clusters that are not ours.
 */
export class ClusterController {
  readonly clusters: Informer<Cluster>;
  readonly profiles: Informer<ClusterProfile>;
  readonly providerConfigs: Informer<ProviderConfig>;
  readonly queue: WorkQueue;
  readonly events: EventRecorder;
  readonly #options: ClusterControllerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #timing: ClusterTiming;
  /** Message of the last failed backend command per Cluster uid; diagnostic only (lost on restart by design). */
  readonly #lastErrors = new Map<string, string>();
  /** Writes to Cluster objects (for benchmarks and tests). */
  writes = 0;

  constructor(options: ClusterControllerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = (options.log ?? silentLogger).with({ controller: "cluster" });
    this.#timing = options.timing ?? DEFAULT_CLUSTER_TIMING;
    this.clusters = options.informers.clusters;
    this.profiles = options.informers.profiles;
    this.providerConfigs = options.informers.providerConfigs;
    this.queue = controllerQueue({
      name: "cluster",
      concurrency: options.concurrency ?? 4,
      clock: this.#clock,
      log: this.#log,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    this.events = new EventRecorder(options.kubeConfig, this.#log);
    options.metrics?.countObjects(() => this.#phaseCounts());
  }

  /** Registers the cache handlers; call before the informers start, so the first list is seen. */
  watch(): void {
    this.clusters.on((event) => {
      this.queue.add(event.key);
      if (event.type === "delete") {
        for (const observer of this.#options.observers ?? [])
          observer.removed("Cluster", event.object.metadata.uid ?? "");
      }
    });
    this.profiles.on((event) => this.#onProfile(event.object.metadata?.name));
    // A config's defaultVersion changes what an unversioned Cluster resolves to.
    this.providerConfigs.on((event) => {
      for (const profile of this.profiles.list()) {
        if (profile.spec.providerConfigRef.name === event.object.metadata?.name)
          this.#onProfile(profile.metadata.name);
      }
    });
  }

  /** Starts reconciling; call once the informers have synced, so no decision is made on a partial cache. */
  run(): void {
    this.queue.start((key) => this.reconcile(key));
    this.#log.info("started", { provider: this.#options.providerName, backend: this.#options.backend.name });
  }

  /** Waits for reconciles in flight; the engine stops the informers. */
  async stop(): Promise<void> {
    await this.queue.shutdown();
  }

  /** Clusters labelled as ours, by status.phase (for the object-count metric). */
  #phaseCounts(): Array<{ kind: string; phase: string; count: number }> {
    const counts = new Map<string, number>();
    for (const cluster of this.clusters.list()) {
      if (cluster.metadata.labels?.[LABELS.provider] !== this.#options.providerName) continue;
      const phase = cluster.status?.phase ?? "Unknown";
      counts.set(phase, (counts.get(phase) ?? 0) + 1);
    }
    return [...counts].map(([phase, count]) => ({ kind: "Cluster", phase, count }));
  }

  /** A profile changed: every Cluster that names it is looked at again. */
  #onProfile(name: string | undefined): void {
    for (const cluster of this.clusters.list()) {
      if (cluster.spec.profile === name)
        this.queue.add(`${cluster.metadata.namespace}/${cluster.metadata.name}`);
    }
  }

  /** One reconcile of the Cluster with this key. */
  async reconcile(key: string): Promise<Outcome> {
    const cluster = this.clusters.get(key);
    if (!cluster) return Outcome.awaitChange();
    const profile = this.profiles.get(cluster.spec.profile);
    const responsibility = clusterResponsibility(cluster, profile, this.#options.providerName);
    if (responsibility === "ignored" || responsibility === "foreign") return Outcome.awaitChange();

    const settings = this.#configOf(profile)?.spec.settings;
    const target = clusterTarget(cluster, profile, settings);
    const uid = target.uid;
    const backend = this.#options.backend;
    let observation: ClusterObservation =
      responsibility === "ours" ? await backend.observe(target) : { exists: false };
    const events: ClusterStepResult["events"][number][] = [];
    /** Failures of backend commands: true whatever became of the writes. */
    const failures: ClusterStepResult["events"][number][] = [];
    // `stored` is what the API server holds; `local` adds the status computed so far, written once at the end.
    let stored = cluster;
    let local = cluster;
    let result: ClusterStepResult | undefined;
    const steps: ClusterStepResult[] = [];
    let committed = false;
    try {
      for (let round = 1; round <= MAX_ROUNDS; round++) {
        result = this.#step(local, profile, observation);
        steps.push(result);
        events.push(...result.events);
        local = applied(local, result.statusPatch);
        if (result.commands.length === 0 || round === MAX_ROUNDS) break;
        // The finalizer goes in before the backend is touched; the status waits for the commands' outcome.
        stored = await this.#patch(stored, result.metadataPatch);
        local = { ...stored, status: local.status } as Cluster;
        try {
          await this.#run(result.commands);
          this.#lastErrors.delete(uid);
        } catch (error) {
          const message = `${describeCommands(result.commands)} failed: ${errorMessage(error)}`;
          this.#lastErrors.set(uid, message);
          failures.push({ type: "Warning", reason: REASONS.BackendError, message });
          const failed = this.#step(stored, profile, observation);
          stored = await this.#patch(stored, failed.statusPatch, "status");
          throw error;
        }
        observation = await backend.observe(target);
      }
      if (result) {
        // Metadata first, so labels are in place when the status says Ready; if it removes our
        // finalizer the object may be gone before the status write, which then ends in GoneError.
        stored = await this.#patch(stored, result.metadataPatch);
        stored = await this.#patch(stored, statusDiff(stored, local), "status");
      }
      committed = true;
    } catch (error) {
      if (error instanceof GoneError) {
        committed = true; // e.g. our finalizer went and the object with it: the step's outcome stands
        return Outcome.awaitChange();
      }
      throw error;
    } finally {
      // Transitions are told only if their writes went through (a stale copy's were refused); failures always.
      await this.#recordEvents(stored, committed ? [...eventsWorthRecording(events), ...failures] : failures);
      if (committed) this.#tellObservers(cluster, steps);
    }
    if (!result) return Outcome.awaitChange();
    this.#options.onReconciled?.(key, result);
    this.#log.info("reconciled", { key, state: result.state, requeueAfterMs: result.requeueAfterMs });
    return result.requeueAfterMs === undefined
      ? Outcome.awaitChange()
      : Outcome.requeueAfter(result.requeueAfterMs);
  }

  #tellObservers(cluster: Cluster, steps: readonly ClusterStepResult[]): void {
    const resource = { kind: "Cluster", machine: clusterMachine, metadata: cluster.metadata };
    tellObservers(this.#options.observers, resource, steps, this.#clock.now());
  }

  #step(
    cluster: Cluster,
    profile: ClusterProfile | undefined,
    observation: ClusterObservation,
  ): ClusterStepResult {
    const lastError = this.#lastErrors.get(cluster.metadata.uid ?? "");
    return stepCluster({
      cluster,
      profile,
      providerName: this.#options.providerName,
      observation,
      ...(lastError === undefined ? {} : { lastError }),
      now: new Date(this.#clock.now()).toISOString().replace(/\.\d+Z$/, "Z"),
      timing: this.#timing,
    });
  }

  #configOf(profile: ClusterProfile | undefined): ProviderConfig | undefined {
    return profile ? this.providerConfigs.get(profile.spec.providerConfigRef.name) : undefined;
  }

  /** Sends one guarded patch (nothing when `operations` is empty); returns the object as stored. */
  async #patch(
    cluster: Cluster,
    operations: readonly PatchOperation[],
    subresource?: "status",
  ): Promise<Cluster> {
    const stored = await patchObject(
      this.#options.kubeConfig,
      {
        group: RESOURCES.Cluster.group,
        version: RESOURCES.Cluster.version,
        plural: RESOURCES.Cluster.plural,
        namespace: cluster.metadata.namespace ?? "",
        name: cluster.metadata.name ?? "",
        resourceVersion: cluster.metadata.resourceVersion ?? "",
      },
      operations,
      subresource,
    );
    if (!stored) return cluster;
    this.writes++;
    this.#log.debug("patched", {
      key: `${cluster.metadata.namespace}/${cluster.metadata.name}`,
      subresource: subresource ?? "object",
      paths: operations.map((operation) => operation.path),
    });
    return stored as unknown as Cluster;
  }

  async #run(commands: readonly ClusterCommand[]): Promise<void> {
    const backend = this.#options.backend;
    for (const command of commands) {
      this.#log.info("backend command", {
        command: command.kind,
        cluster: `${command.target.namespace}/${command.target.name}`,
        ...("version" in command ? { version: command.version } : {}),
      });
      if (command.kind === "create") await backend.create(command.target, command.version);
      else if (command.kind === "update") await backend.update(command.target, command.version);
      else await backend.delete(command.target);
    }
  }

  async #recordEvents(cluster: Cluster, events: ClusterStepResult["events"]): Promise<void> {
    if (this.#options.recordEvents === false) return;
    const now = new Date(this.#clock.now());
    for (const event of events) await this.events.record(cluster, event, now);
  }
}

/** The status operations that turn the stored object's status into the locally computed one. */
function statusDiff(stored: Cluster, local: Cluster): PatchOperation[] {
  return diff(
    stored.status === undefined ? {} : { status: stored.status as unknown as Json },
    local.status === undefined ? {} : { status: local.status as unknown as Json },
  );
}

function describeCommands(commands: readonly ClusterCommand[]): string {
  return commands.map((command) => command.kind).join(", ");
}
