/** The engine: shared informers, the Cluster and profile controllers, started and stopped as one. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterBackend } from "../api/backend-contract.ts";
import type { ClusterStepResult, ClusterTiming } from "../machines/cluster/step.ts";
import { AccessPreparationController } from "./access-preparation-controller.ts";
import { AccessRequestController, type AccessTiming } from "./access-request-controller.ts";
import type { Clock } from "./clock.ts";
import { ClusterController } from "./cluster-controller.ts";
import { createInformers, type EngineInformers, startInformers, stopInformers } from "./informers.ts";
import { type LeaderElectionOptions, LeaderElector } from "./leader-election.ts";
import { type Logger, silentLogger } from "./logger.ts";
import type { MachineObserver } from "./machine-observer.ts";
import { EngineMetrics } from "./metrics.ts";
import { ProfileController } from "./profile-controller.ts";

/** Everything the engine needs; the CLI builds it from flags. */
export interface EngineOptions {
  readonly kubeConfig: KubeConfig;
  /** `--provider-name` */
  readonly providerName: string;
  /** `--environment`, the first part of generated profile names. */
  readonly environment: string;
  readonly backend: ClusterBackend;
  /** Clusters reconciled at once. */
  readonly concurrency?: number;
  readonly timing?: ClusterTiming;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly recordEvents?: boolean;
  readonly onReconciled?: (key: string, result: ClusterStepResult) => void;
  /** Told about every committed machine step (the Stately inspector, the live view). */
  readonly observers?: readonly MachineObserver[];
  /** Run the generic AccessRequest preparation (default true; off beside the openMCP operator, which does it). */
  readonly prepareAccessRequests?: boolean;
  /** Validity of issued tokens and polling of AccessRequests. */
  readonly accessTiming?: AccessTiming;
  /** Metrics to record into (default: a registry of the engine's own). */
  readonly metrics?: EngineMetrics;
  /** Reconcile only while holding this Lease; absent = always (a single replica). */
  readonly leaderElection?: Omit<
    LeaderElectionOptions,
    "kubeConfig" | "onStartedLeading" | "onStoppedLeading" | "log" | "clock"
  >;
  /** Called if leadership is lost after it was won; the caller should exit so the pod restarts cleanly. */
  readonly onLostLeadership?: () => void;
}

/** Runs the controllers over one set of informers. */
export class Engine {
  readonly informers: EngineInformers;
  readonly clusters: ClusterController;
  readonly profiles: ProfileController;
  readonly accessRequests: AccessRequestController;
  readonly preparation: AccessPreparationController | undefined;
  readonly metrics: EngineMetrics;
  readonly elector: LeaderElector | undefined;
  readonly #options: EngineOptions;
  readonly #log: Logger;
  #started = false;

  constructor(options: EngineOptions) {
    this.#options = options;
    this.#log = options.log ?? silentLogger;
    this.informers = createInformers(options.kubeConfig, this.#log, options.clock);
    this.metrics = options.metrics ?? new EngineMetrics();
    const common = {
      kubeConfig: options.kubeConfig,
      informers: this.informers,
      log: this.#log,
      metrics: this.metrics,
    };
    const election = options.leaderElection;
    this.elector = election
      ? new LeaderElector({
          ...election,
          kubeConfig: options.kubeConfig,
          log: this.#log,
          ...(options.clock ? { clock: options.clock } : {}),
          onStartedLeading: () => {
            this.metrics.setLeader(election.name, true);
            this.#run();
          },
          onStoppedLeading: () => {
            this.metrics.setLeader(election.name, false);
            options.onLostLeadership?.();
          },
        })
      : undefined;
    if (election) this.metrics.setLeader(election.name, false);
    this.clusters = new ClusterController({
      ...common,
      providerName: options.providerName,
      backend: options.backend,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.timing ? { timing: options.timing } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.recordEvents === undefined ? {} : { recordEvents: options.recordEvents }),
      ...(options.onReconciled ? { onReconciled: options.onReconciled } : {}),
      ...(options.observers ? { observers: options.observers } : {}),
    });
    this.accessRequests = new AccessRequestController({
      ...common,
      providerName: options.providerName,
      backend: options.backend,
      ...(options.accessTiming ? { timing: options.accessTiming } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.observers ? { observers: options.observers } : {}),
    });
    this.preparation =
      options.prepareAccessRequests === false
        ? undefined
        : new AccessPreparationController({ ...common, ...(options.clock ? { clock: options.clock } : {}) });
    this.profiles = new ProfileController({
      ...common,
      owner: {
        providerName: options.providerName,
        environment: options.environment,
        backend: options.backend.name,
      },
      backend: options.backend,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /**
   * Watches and waits for complete caches; then reconciles, at once or, with leader election, once this
   * replica holds the Lease (a standby keeps its caches warm and serves probes, but writes nothing).
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error("Engine.start called twice");
    this.#started = true;
    this.clusters.watch();
    this.profiles.watch();
    this.accessRequests.watch();
    this.preparation?.watch();
    await startInformers(this.informers);
    if (this.elector) this.elector.start();
    else this.#run();
    this.#log.info("engine started", {
      provider: this.#options.providerName,
      environment: this.#options.environment,
      backend: this.#options.backend.name,
      leaderElection: this.elector !== undefined,
    });
  }

  #run(): void {
    this.clusters.run();
    this.profiles.run();
    this.accessRequests.run();
    this.preparation?.run();
  }

  /** The backend the engine drives. */
  get backend(): ClusterBackend {
    return this.#options.backend;
  }

  /** Whether every cache holds a complete list (readiness). */
  hasSynced(): boolean {
    return Object.values(this.informers).every((informer: { hasSynced(): boolean }) => informer.hasSynced());
  }

  /** Stops watching, finishes reconciles in flight, closes the backend. */
  async stop(): Promise<void> {
    stopInformers(this.informers);
    await Promise.all([
      this.clusters.stop(),
      this.profiles.stop(),
      this.accessRequests.stop(),
      this.preparation?.stop(),
    ]);
    await this.elector?.release(); // after the last write: the next leader starts from a quiet world
    await this.#options.backend.close?.();
    this.#log.info("engine stopped");
  }
}
