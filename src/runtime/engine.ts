/** The engine: shared caches and a list of controllers (one generic machine controller per registered kind), started and stopped as one. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterBackend } from "../api/backend-contract.ts";
import { AdminAccessCache } from "./admin-access-cache.ts";
import { countResponses, limitRate } from "./api-server/api-traffic.ts";
import { interceptRequests, reuseConnections } from "./api-server/connection-reuse.ts";
import { TokenBucket } from "./api-server/token-bucket.ts";
import { type BackendSource, Backends } from "./backends.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Controller } from "./controllers/controller.ts";
import type { KeyedController } from "./controllers/keyed-controller.ts";
import { guardWrites, WriteLoopGuard, type WriteLoopLimits } from "./controllers/write-loop-guard.ts";
import { EventRecorder } from "./event-recorder.ts";
import { InformerSet } from "./informers.ts";
import {
  type KindSettingsByName,
  MACHINE_KINDS,
  PROFILE_CACHES,
  ProfileController,
} from "./kinds/registry.ts";
import { type LeaderElectionOptions, LeaderElector } from "./leadership/leader-election.ts";
import type { LeaseTiming } from "./leadership/lease.ts";
import { type Logger, silentLogger } from "./logger.ts";
import { type AnyStep, MachineController } from "./machine-controller.ts";
import {
  cachesOf,
  type KindContext,
  type KindSettings,
  kindTiming,
  type MachineKind,
  type MachineObject,
} from "./machine-kind.ts";
import type { MachineObserver } from "./machine-observer.ts";
import { EngineMetrics } from "./metrics.ts";
import { ShardRing } from "./sharding/shard-ring.ts";
import type { EngineTracing } from "./tracing/engine-tracing.ts";

/** Everything the engine needs; the CLI builds it from flags. */
export interface EngineOptions {
  readonly kubeConfig: KubeConfig;
  /** `--provider-name` */
  readonly providerName: string;
  /** `--environment`, the first part of generated profile names. */
  readonly environment: string;
  /** The backend (`--backend`), or a catalog each ProviderConfig chooses its backend from (no `--backend`). */
  readonly backend: BackendSource;
  /** Objects of each kind reconciled at once. */
  readonly concurrency?: number;
  /**
   * Client-side rate limit of the engine's requests (`--kube-api-qps`/`--kube-api-burst`); none by
   * default: the API server's Priority and Fairness decides, and its 429s are waited out.
   */
  readonly apiRateLimit?: { readonly qps: number; readonly burst: number };
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly recordEvents?: boolean;
  /** Told after every reconcile that stepped a machine. */
  readonly onReconciled?: (kind: string, key: string, step: AnyStep) => void;
  /** The machine-backed kinds to drive (default: every registered kind). */
  readonly kinds?: readonly MachineKind[];
  /** Told about every committed machine step (the Stately inspector, the live view). */
  readonly observers?: readonly MachineObserver[];
  /** The engine's spans (see tracing/otel-sdk.ts); absent: no tracing. */
  readonly tracing?: EngineTracing;
  /**
   * Watch one namespace (`--namespace`): every namespaced cache lists and watches only it; cluster-scoped
   * kinds stay cluster-wide. Absent or empty: all namespaces.
   */
  readonly namespace?: string;
  /**
   * Cluster API's `--watch-filter`: only caches marked watch-filtered (Cluster API's objects and the kinds
   * it owns) hold objects labelled `cluster.x-k8s.io/watch-filter=<value>`. Absent or empty: all of them.
   */
  readonly watchFilter?: string;
  /**
   * Settings of kinds by kind name: `timing` overrides fields of a kind's timing, the rest each kind reads
   * itself (e.g. `{ Cluster: { pools: true }, MyKind: { timing: { pollMs: 500 }, enabled: false } }`).
   */
  readonly kindSettings?: KindSettingsByName;
  /** Metrics to record into (default: a registry of the engine's own). */
  readonly metrics?: EngineMetrics;
  /** Reconcile only while holding this Lease; absent = always (a single replica). */
  readonly leaderElection?: Omit<
    LeaderElectionOptions,
    "kubeConfig" | "onStartedLeading" | "onStoppedLeading" | "log" | "clock"
  >;
  /**
   * Sharded mode (instead of leader election): every replica works, on the objects a ring of membership
   * Leases in `namespace` gives it.
   */
  readonly sharding?: {
    readonly namespace: string;
    /** Unique per replica process. */
    readonly identity: string;
    readonly timing?: LeaseTiming;
  };
  /** When the write-loop guard holds an object back (default: `DEFAULT_WRITE_LOOP_LIMITS`, see write-loop-guard.ts). */
  readonly writeLoopLimits?: WriteLoopLimits;
  /**
   * Called if leadership (or, sharded, the membership Lease) is lost after it was won; the caller should
   * exit so the pod restarts cleanly.
   */
  readonly onLostLeadership?: () => void;
}

/** A kind the engine drives, with its settings and context for this engine. */
export interface DrivenKind {
  readonly kind: MachineKind;
  readonly settings: KindSettings;
  readonly context: KindContext;
}

/**
 * The kinds an engine drives, by kind name: each gets its own settings, says whether it runs, brings its timing
 * and state, and names every cache it reads, all made here, before the caches start. Shared by the engine and
 * `plan` (see plan/), so a plan's kinds are the engine's, built the same way.
 */
export function drivenKinds(
  kinds: readonly MachineKind[],
  kindSettings: KindSettingsByName | undefined,
  shared: Omit<KindContext, "timing" | "state">,
): Map<string, DrivenKind> {
  return new Map(
    kinds
      .map((kind) => ({ kind, settings: kindSettings?.[kind.definition.kind] ?? {} }))
      .filter(({ kind, settings }) => kind.enabled?.(settings) ?? true)
      .map(({ kind, settings }) => {
        const own = { ...shared, timing: kindTiming(kind, settings), state: undefined };
        const context: KindContext = { ...own, state: kind.state?.(own, settings) };
        for (const cache of cachesOf(kind)) shared.informers.of(cache);
        return [kind.definition.kind, { kind, settings, context }];
      }),
  );
}

/** Runs the controllers over one set of caches. */
export class Engine {
  readonly informers: InformerSet;
  /** One per kind the engine drives, by kind name. */
  readonly machines: ReadonlyMap<string, MachineController<MachineObject>>;
  readonly profiles: ProfileController;
  /** Every controller, in start order. */
  readonly controllers: readonly Controller[];
  readonly metrics: EngineMetrics;
  readonly elector: LeaderElector | undefined;
  /** Sharded mode: this replica's membership and the gate its controllers ask. */
  readonly shards: ShardRing | undefined;
  /** The backends it drives (see backends.ts). */
  readonly backends: Backends;
  /** Every write of the engine passes it: an object written in a loop is held back. */
  readonly writeGuard: WriteLoopGuard;
  /** The guard's Warning Events. */
  readonly #guardEvents: EventRecorder;
  readonly #options: EngineOptions;
  /** The kinds this engine drives, by kind. */
  readonly #kinds: ReadonlyMap<string, DrivenKind>;
  readonly #log: Logger;
  /** Takes the engine's interceptors off its KubeConfig again. */
  readonly #unintercept: Array<() => void> = [];
  #started = false;

  constructor(given: EngineOptions) {
    // Every request of the engine reuses its TLS connections (see connection-reuse.ts).
    const options = { ...given, kubeConfig: reuseConnections(given.kubeConfig) };
    this.#options = options;
    this.#log = options.log ?? silentLogger;
    this.informers = new InformerSet(options.kubeConfig, this.#log, options.clock, {
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.watchFilter ? { watchFilter: options.watchFilter } : {}),
    });
    const configs = this.informers.of(PROFILE_CACHES.providerConfigs);
    this.backends = new Backends(options.backend, (name) => configs.get(name));
    this.metrics = options.metrics ?? new EngineMetrics();
    this.metrics.countCaches(() => this.informers.sizes());
    // Every request counted by method and code; held back first if a client-side limit is set.
    const limit = options.apiRateLimit;
    if (limit) {
      const bucket = new TokenBucket({ ...limit, clock: options.clock ?? systemClock });
      this.#unintercept.push(
        interceptRequests(
          options.kubeConfig,
          limitRate(bucket, (ms, verb, host) => this.metrics.rateLimited(ms, verb, host)),
        ),
      );
    }
    this.#unintercept.push(
      interceptRequests(
        options.kubeConfig,
        countResponses((request) => this.metrics.requestDone(request)),
      ),
    );
    this.#guardEvents = new EventRecorder(options.kubeConfig, this.#log);
    this.writeGuard = new WriteLoopGuard({
      clock: options.clock ?? systemClock,
      log: this.#log.with({ controller: "write-loop-guard" }),
      metrics: this.metrics,
      providerName: options.providerName,
      ...(options.recordEvents === false
        ? {}
        : { sendEvent: (subject, event, now) => this.#guardEvents.send(subject, event, now) }),
      ...(options.writeLoopLimits ? { limits: options.writeLoopLimits } : {}),
    });
    this.#unintercept.push(guardWrites(options.kubeConfig, this.writeGuard));
    const election = options.leaderElection;
    if (election && options.sharding) throw new Error("leader election and sharding exclude each other");
    this.shards = options.sharding
      ? new ShardRing({
          ...options.sharding,
          kubeConfig: options.kubeConfig,
          ring: options.providerName,
          log: this.#log,
          ...(options.clock ? { clock: options.clock } : {}),
          onLost: () => options.onLostLeadership?.(),
        })
      : undefined;
    const common = {
      kubeConfig: options.kubeConfig,
      informers: this.informers,
      log: this.#log,
      metrics: this.metrics,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(this.shards ? { shards: this.shards } : {}),
    };
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

    const clock = options.clock ?? systemClock;
    const shared = {
      kubeConfig: options.kubeConfig,
      informers: this.informers,
      providerName: options.providerName,
      environment: options.environment,
      backend: this.backends.router,
      backends: this.backends,
      // One for the engine: every kind that needs admin access asks the backend through it.
      adminAccess: new AdminAccessCache({ backend: this.backends.router, clock }),
      clock,
      log: this.#log,
      ...(options.tracing ? { tracing: options.tracing } : {}),
    };
    this.#kinds = drivenKinds(options.kinds ?? MACHINE_KINDS, options.kindSettings, shared);
    this.machines = new Map(
      [...this.#kinds.values()].map(({ kind, context }) => [
        kind.definition.kind,
        new MachineController({
          kind,
          context,
          metrics: this.metrics,
          ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
          ...(options.recordEvents === undefined ? {} : { recordEvents: options.recordEvents }),
          ...(options.observers ? { observers: options.observers } : {}),
          ...(options.onReconciled ? { onReconciled: options.onReconciled } : {}),
          ...(this.shards ? { shards: this.shards } : {}),
        }),
      ]),
    );
    const parts = { metrics: this.metrics, ...(this.shards ? { shards: this.shards } : {}) };
    const kindControllers = [...this.#kinds.values()].flatMap(
      ({ kind, settings, context }) => kind.controllers?.(context, settings, parts) ?? [],
    );
    this.profiles = new ProfileController({
      ...common,
      owner: {
        providerName: options.providerName,
        environment: options.environment,
        backends: this.backends.names,
      },
      backends: this.backends,
    });
    const controllers: KeyedController[] = [this.profiles, ...this.machines.values(), ...kindControllers];
    this.controllers = controllers;
    const shards = this.shards;
    if (shards) {
      this.metrics.countShards(
        () => shards.view,
        () =>
          controllers.map((controller) => ({ controller: controller.name, count: controller.ownedKeys() })),
      );
    }
  }

  /** Lines /readyz shows besides its verdict: what the engine leaves to others (the scheduler's stance). */
  readinessDetails(): readonly string[] {
    return (this.#options.kinds ?? MACHINE_KINDS).flatMap(
      (kind) =>
        kind.readiness?.(this.#settingsOf(kind), this.#kinds.get(kind.definition.kind)?.context) ?? [],
    );
  }

  /** A kind's own settings: its `kindSettings` entry. */
  #settingsOf(kind: MachineKind): KindSettings {
    return this.#options.kindSettings?.[kind.definition.kind] ?? {};
  }

  /** The machine controller of `kind` (by kind name); throws when the engine does not drive it. */
  machine(kind: string): MachineController<MachineObject> {
    const controller = this.machines.get(kind);
    if (!controller) throw new Error(`the engine drives no ${kind}s`);
    return controller;
  }

  /**
   * Watches and waits for complete caches; then reconciles, at once or, with leader election, once this
   * replica holds the Lease (a standby keeps its caches warm and serves probes, but writes nothing).
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error("Engine.start called twice");
    this.#started = true;
    // What a kind must have before it works (e.g. a valid scheduler configuration) stops the start here.
    for (const { kind, context } of this.#kinds.values()) await kind.start?.(context);
    for (const controller of this.controllers) controller.watch();
    await this.informers.start();
    this.shards?.start();
    if (this.elector) this.elector.start();
    else this.#run();
    this.#log.info("engine started", {
      provider: this.#options.providerName,
      environment: this.#options.environment,
      backends: this.backends.names,
      kinds: [...this.machines.keys()],
      leaderElection: this.elector !== undefined,
      ...(this.#options.namespace ? { namespace: this.#options.namespace } : {}),
      ...(this.#options.watchFilter ? { watchFilter: this.#options.watchFilter } : {}),
      ...(this.shards ? { shardIdentity: this.shards.identity } : {}),
    });
  }

  #run(): void {
    for (const controller of this.controllers) controller.run();
  }

  /** The backend the engine drives: the one it was given, or one routing each cluster to its ProviderConfig's. */
  get backend(): ClusterBackend {
    return this.backends.router;
  }

  /** Whether every cache holds a complete list (readiness). */
  hasSynced(): boolean {
    return this.informers.hasSynced();
  }

  /** Stops watching, finishes reconciles in flight, closes the backend. */
  async stop(): Promise<void> {
    this.informers.stop();
    for (const { kind, context } of this.#kinds.values()) kind.stop?.(context);
    await Promise.all(this.controllers.map((controller) => controller.stop()));
    await this.elector?.release(); // after the last write: the next leader starts from a quiet world
    await this.shards?.release(); // likewise: peers take our keys once our work has finished
    await this.backends.close();
    await this.#guardEvents.flush();
    for (const remove of this.#unintercept.splice(0)) remove();
    await this.#options.tracing?.shutdown(); // the last spans, exported
    this.#log.info("engine stopped");
  }
}
