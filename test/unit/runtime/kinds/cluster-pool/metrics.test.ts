/** The warm pools' metrics: the ClusterPool kind's own, made into the engine's registry once, on first use. */
import { describe, expect, it } from "vitest";
import { poolMetrics } from "../../../../../src/runtime/kinds/cluster-pool/metrics.ts";
import { EngineMetrics } from "../../../../../src/runtime/metrics.ts";

describe("pool metrics", () => {
  it("are absent until a pool part asks, then one set per engine, read at scrape time", async () => {
    const metrics = new EngineMetrics();
    expect(await metrics.registry.metrics()).not.toContain("openmcp_engine_pool_clusters");
    const pools = poolMetrics(metrics);
    expect(poolMetrics(metrics)).toBe(pools);
    pools.countPools(() => [{ pool: "warm", state: "idle", count: 2 }]);
    pools.poolServed("warm", "hit");
    pools.poolServed("warm", "woken");
    pools.clusterReady("pool", 1_500);
    pools.clusterReady("woken", 4_000);
    const text = await metrics.registry.metrics();
    expect(text).toContain('openmcp_engine_pool_clusters{pool="warm",state="idle"} 2');
    expect(text).toContain('openmcp_engine_pool_clusters_total{pool="warm",result="hit"} 1');
    expect(text).toContain('openmcp_engine_cluster_time_to_ready_seconds_count{source="pool"} 1');
    // A sleeping pool's member, woken for the Cluster that took it, is counted apart.
    expect(text).toContain('openmcp_engine_pool_clusters_total{pool="warm",result="woken"} 1');
    expect(text).toContain('openmcp_engine_cluster_time_to_ready_seconds_count{source="woken"} 1');
  });
});
