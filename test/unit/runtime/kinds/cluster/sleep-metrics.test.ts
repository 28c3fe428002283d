import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../../src/api/cluster.ts";
import { SleepMetrics } from "../../../../../src/runtime/kinds/cluster/sleep-metrics.ts";

const inState = (state: string): Cluster =>
  ({
    metadata: { name: state },
    spec: { profile: "p" },
    status: { providerStatus: { state } },
  }) as unknown as Cluster;

describe("hibernation's metrics", () => {
  it("count the Clusters asleep or on their way by state, and time each wake from its order to Ready", async () => {
    const registry = new Registry();
    const metrics = new SleepMetrics();
    const clusters = ["ready", "hibernated", "hibernated", "waking", "pending"].map(inState);
    metrics.register(registry, () => clusters);
    metrics.stepped("a", "hibernated", "waking", 10_000);
    metrics.stepped("a", "waking", "waking", 12_000);
    metrics.stepped("a", "waking", "ready", 17_500); // 7.5 s
    metrics.stepped("b", "hibernated", "waking", 20_000);
    metrics.stepped("b", "waking", "deleting.blocked", 21_000); // not a wake: not counted
    const text = await registry.metrics();
    expect(text).toContain('openmcp_engine_clusters_sleeping{state="hibernated"} 2');
    expect(text).toContain('openmcp_engine_clusters_sleeping{state="waking"} 1');
    expect(text).toContain('openmcp_engine_clusters_sleeping{state="hibernating"} 0');
    expect(text).toContain("openmcp_engine_cluster_wake_seconds_count 1");
    expect(text).toContain("openmcp_engine_cluster_wake_seconds_sum 7.5");
  });
});
