/**
 * The warm pools' metrics, the ClusterPool kind's own: registered into the engine's registry the first
 * time a pool part asks for them ({@link poolMetrics}), so an engine without pools shows none.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { scrapedGauge } from "../../scraped-gauge.ts";

/** Time to Ready in seconds, in the buckets of the engine's reconcile latencies. */
const READY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A pool's size in one state, as read at scrape time. */
export interface PoolCount {
  readonly pool: string;
  readonly state: string;
  readonly count: number;
}

/** The pools' metrics in one registry. */
export class PoolMetrics {
  readonly #served: Counter<"pool" | "result">;
  readonly #timeToReady: Histogram<"source">;
  readonly #sources: Array<() => readonly PoolCount[]> = [];

  constructor(registry: Registry) {
    this.#served = new Counter({
      name: "openmcp_engine_pool_clusters_total",
      help: "New Clusters of a ProviderConfig with a warm pool, by result: hit (bound to an idle awake pool cluster), woken (bound to a sleeping one, woken for it) or miss (made as usual)",
      labelNames: ["pool", "result"] as const,
      registers: [registry],
    });
    this.#timeToReady = new Histogram({
      name: "openmcp_engine_cluster_time_to_ready_seconds",
      help: "Time from a Cluster's creation to its first Ready, by source: pool (bound to a warm cluster), woken (bound to a sleeping pool's member, woken for it) or made",
      labelNames: ["source"] as const,
      buckets: READY_BUCKETS,
      registers: [registry],
    });
    const sources = this.#sources;
    scrapedGauge(
      registry,
      {
        name: "openmcp_engine_pool_clusters",
        help: "Clusters of each warm pool, by state: idle (awake), binding, refilling; a sleeping pool's also hibernating, hibernated, waking",
        labelNames: ["pool", "state"],
      },
      () =>
        sources.flatMap((read) => read().map(({ pool, state, count }) => [{ pool, state }, count] as const)),
    );
  }

  /** Sizes of the warm pools by state, read on every scrape. */
  countPools(read: () => readonly PoolCount[]): void {
    this.#sources.push(read);
  }

  /**
   * A new Cluster with a pool for its ProviderConfig was bound to an awake pool cluster (`hit`), to a sleeping one
   * it wakes (`woken`), or made as usual (`miss`).
   */
  poolServed(pool: string, result: "hit" | "woken" | "miss"): void {
    this.#served.inc({ pool, result });
  }

  /** A Cluster became Ready for the first time, `ms` after its creation. */
  clusterReady(source: "pool" | "woken" | "made", ms: number): void {
    this.#timeToReady.observe({ source }, ms / 1_000);
  }
}

const makePoolMetrics = (registry: Registry) => new PoolMetrics(registry);

/** The pool metrics of an engine's metrics (e.g. a kind's `parts.metrics`), made on first use. */
export function poolMetrics(metrics: { part<T>(make: (registry: Registry) => T): T }): PoolMetrics {
  return metrics.part(makePoolMetrics);
}
