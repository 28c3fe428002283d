/**
 * The engine's traffic to a real API server, as /metrics shows it: every request counted by method and
 * code, a client-side rate limit that holds requests back when set, and the work queues' in-flight gauges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.ts";
import { sample } from "../support/prometheus-text.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

let world: World;

beforeAll(async () => {
  // The engine has a KubeConfig of its own, so the limit holds back its requests and not the test's.
  world = await startWorld({ engine: { apiRateLimit: { qps: 50, burst: 1 } } });
});

afterAll(async () => {
  await world?.stop();
});

describe("the engine's API traffic", () => {
  it("counts every request by method and code, holds requests to the rate asked, and shows each queue's work in flight", async () => {
    for (const name of ["t-1", "t-2", "t-3"]) await world.createCluster(name);
    for (const name of ["t-1", "t-2", "t-3"]) await world.waitFor(name, isReady, 30_000);
    // The finalizer and status patches of three Clusters, all answered 200 (the engine may read the last
    // answer a moment after the test sees Ready).
    await eventually(
      async () =>
        expect(
          sample(await world.engine.metrics.registry.metrics(), "rest_client_requests_total", {
            method: "PATCH",
            code: "200",
          }),
        ).toBeGreaterThanOrEqual(6),
      { what: "six PATCHes counted", timeoutMs: 10_000 },
    );
    const text = await world.engine.metrics.registry.metrics();
    // Lists and watches.
    expect(sample(text, "rest_client_requests_total", { method: "GET", code: "200" })).toBeGreaterThan(0);
    const host = new URL(world.controlPlane.kubeConfig.getCurrentCluster()?.server ?? "").host;
    expect(text).toContain(`host="${host}"`);
    // With a burst of 1, the informers starting together must have waited for the limiter.
    expect(sample(text, "rest_client_rate_limiter_duration_seconds_count", { verb: "GET" })).toBeGreaterThan(
      0,
    );
    // The in-flight gauges per controller (their arithmetic: test/unit/runtime/controllers/queue-metrics.test.ts).
    expect(text).toMatch(
      /^workqueue_longest_running_processor_seconds\{name="cluster",controller="cluster"\} [\d.]+$/m,
    );
    expect(text).toMatch(
      /^workqueue_unfinished_work_seconds\{name="cluster",controller="cluster"\} [\d.]+$/m,
    );
  }, 60_000);
});
