/** Prometheus metrics under the names Kubernetes operators already scrape (controller-runtime's), plus ours. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { WorkQueueObserver } from "./controllers/work-queue.ts";
import { scrapedGauge } from "./scraped-gauge.ts";

const seconds = (ms: number) => ms / 1_000;
/** The labels of a work queue's metrics: the queue, named for its controller, and the controller. */
const QUEUE_LABELS = ["name", "controller"] as const;
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The engine's metrics in a registry of their own (no global state). */
export class EngineMetrics {
  readonly registry = new Registry();
  readonly #reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers: [this.registry],
  });
  readonly #reconcileErrors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly #reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  readonly #adds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames: QUEUE_LABELS,
    registers: [this.registry],
  });
  readonly #depthSources = new Map<string, () => number>();
  readonly #cacheSources: Array<() => ReadonlyArray<{ cache: string; count: number }>> = [];
  #processMetrics = false;
  readonly #objectSources: Array<() => Array<{ kind: string; phase: string; count: number }>> = [];
  readonly #queueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: QUEUE_LABELS,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  readonly #workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: QUEUE_LABELS,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  readonly #retries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: QUEUE_LABELS,
    registers: [this.registry],
  });
  readonly #leader = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });

  readonly #requests = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host",
    labelNames: ["code", "method", "host"] as const,
    registers: [this.registry],
  });
  readonly #rateLimiterWait = new Histogram({
    name: "rest_client_rate_limiter_duration_seconds",
    help: "Client side rate limiter latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  readonly #runningSources = new Map<string, () => readonly number[]>();
  readonly #objectWrites = new Counter({
    name: "openmcp_engine_object_writes_total",
    help: "Writes of objects (patches, creates, deletes) this engine sent, by resource",
    labelNames: ["resource"] as const,
    registers: [this.registry],
  });
  readonly #writeLoops = new Counter({
    name: "openmcp_engine_write_loops_total",
    help: "Times an object was written more often than any normal reconcile does (a write loop), by resource; each starts a hold",
    labelNames: ["resource"] as const,
    registers: [this.registry],
  });
  readonly #writesHeldBack = new Counter({
    name: "openmcp_engine_writes_held_back_total",
    help: "Writes not sent because their object was held back after a write loop, by resource",
    labelNames: ["resource"] as const,
    registers: [this.registry],
  });
  /** The metrics of the kinds' own parts, by what made them (see {@link part}). */
  readonly #parts = new Map<(registry: Registry) => unknown, unknown>();

  constructor() {
    // Gauges that mirror live state are read at scrape time, never kept up to date by hand.
    const depthSources = this.#depthSources;
    const objectSources = this.#objectSources;
    scrapedGauge(
      this.registry,
      { name: "workqueue_depth", help: "Current depth of workqueue", labelNames: QUEUE_LABELS },
      () => [...depthSources].map(([controller, read]) => [{ name: controller, controller }, read()]),
    );
    // controller-runtime's stuck-worker signals, from how long each in-flight reconcile has been running.
    const runningSources = this.#runningSources;
    scrapedGauge(
      this.registry,
      {
        name: "workqueue_unfinished_work_seconds",
        help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
        labelNames: QUEUE_LABELS,
      },
      () =>
        [...runningSources].map(([controller, read]) => [
          { name: controller, controller },
          seconds(read().reduce((sum, ms) => sum + ms, 0)),
        ]),
    );
    scrapedGauge(
      this.registry,
      {
        name: "workqueue_longest_running_processor_seconds",
        help: "How many seconds has the longest running processor for workqueue been running.",
        labelNames: QUEUE_LABELS,
      },
      () =>
        [...runningSources].map(([controller, read]) => [
          { name: controller, controller },
          seconds(Math.max(0, ...read())),
        ]),
    );
    const cacheSources = this.#cacheSources;
    scrapedGauge(
      this.registry,
      {
        name: "openmcp_engine_informer_cache_objects",
        help: "Objects held in each informer cache",
        labelNames: ["cache"],
      },
      () => cacheSources.flatMap((read) => read().map(({ cache, count }) => [{ cache }, count] as const)),
    );
    scrapedGauge(
      this.registry,
      {
        name: "openmcp_engine_objects",
        help: "Objects this provider is responsible for, by kind and status.phase",
        labelNames: ["kind", "phase"],
      },
      () =>
        objectSources.flatMap((read) =>
          read().map(({ kind, phase, count }) => [{ kind, phase }, count] as const),
        ),
    );
  }

  /**
   * Sharded mode, read on every scrape: the live members of the ring as this replica sees them, and how
   * many objects of each controller it owns.
   */
  countShards(
    members: () => { readonly self: string; readonly members: readonly string[] },
    owned: () => ReadonlyArray<{ controller: string; count: number }>,
  ): void {
    scrapedGauge(
      this.registry,
      {
        name: "openmcp_engine_shard_members",
        help: "Live replicas of the shard ring as this replica sees them (1 per member; self=true for this replica)",
        labelNames: ["identity", "self"],
      },
      () => {
        const view = members();
        return view.members.map((identity) => [{ identity, self: String(identity === view.self) }, 1]);
      },
    );
    scrapedGauge(
      this.registry,
      {
        name: "openmcp_engine_shard_owned_objects",
        help: "Objects of each controller that the shard ring gives this replica",
        labelNames: ["controller"],
      },
      () => owned().map(({ controller, count }) => [{ controller }, count]),
    );
  }

  /**
   * Adds the standard process and Node.js metrics (CPU, RSS, heap spaces, GC, event-loop lag, handles:
   * prom-client's default collectors). Once per process: the engine's own `run` turns it on.
   */
  collectProcessMetrics(): void {
    if (this.#processMetrics) return;
    this.#processMetrics = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** Sizes of the informer caches, read on every scrape. */
  countCaches(read: () => ReadonlyArray<{ cache: string; count: number }>): void {
    this.#cacheSources.push(read);
  }

  /**
   * Reconcile counters and work-queue metrics for one controller's queue; `depth` and `running` (how long
   * each reconcile in flight has been running, ms) are read on every scrape.
   */
  queueObserver(
    controller: string,
    depth: () => number,
    running: () => readonly number[] = () => [],
  ): WorkQueueObserver {
    const labels = { name: controller, controller };
    this.#depthSources.set(controller, depth);
    this.#runningSources.set(controller, running);
    return {
      added: () => this.#adds.inc(labels),
      started: (waitedMs) => this.#queueDuration.observe(labels, seconds(waitedMs)),
      finished: (workedMs, outcome) => {
        this.#workDuration.observe(labels, seconds(workedMs));
        this.#reconcileTime.observe({ controller }, seconds(workedMs));
        this.#reconcileTotal.inc({ controller, result: outcome });
        if (outcome === "error") this.#reconcileErrors.inc({ controller });
      },
      retried: () => this.#retries.inc(labels),
    };
  }

  /** Counts of objects by kind and phase, read on every scrape. */
  countObjects(read: () => Array<{ kind: string; phase: string; count: number }>): void {
    this.#objectSources.push(read);
  }

  /** One request to an API server answered with `code` (`<error>`: no answer). */
  requestDone(request: { method: string; code: string; host: string }): void {
    this.#requests.inc(request);
  }

  /** A request waited `ms` for the client-side rate limiter. */
  rateLimited(ms: number, verb: string, host = ""): void {
    this.#rateLimiterWait.observe({ verb, host }, seconds(ms));
  }

  /** A write of an object of `resource` (plural) passed the write-loop guard and is being sent. */
  objectWritten(resource: string): void {
    this.#objectWrites.inc({ resource });
  }

  /** An object of `resource` was found written in a loop (once per hold). */
  writeLoopDetected(resource: string): void {
    this.#writeLoops.inc({ resource });
  }

  /** A write of an object of `resource` was refused while the object is held back. */
  writeHeldBack(resource: string): void {
    this.#writesHeldBack.inc({ resource });
  }

  /**
   * Metrics a kind keeps itself (e.g. the warm pools'), made by `make` into this registry the first time
   * it is asked for, the same ones after.
   */
  part<T>(make: (registry: Registry) => T): T {
    if (!this.#parts.has(make)) this.#parts.set(make, make(this.registry));
    return this.#parts.get(make) as T;
  }

  /** Whether this replica leads `lease`. */
  setLeader(lease: string, leading: boolean): void {
    this.#leader.set({ name: lease }, leading ? 1 : 0);
  }
}
