/** controller-runtime's stuck-worker gauges: how long the reconciles in flight have been running, read at scrape time. */
import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../../../src/runtime/controllers/work-queue.ts";
import { EngineMetrics } from "../../../../src/runtime/metrics.ts";
import { FakeClock } from "../../../support/fake-clock.ts";

async function gauge(metrics: EngineMetrics, name: string): Promise<number> {
  const text = await metrics.registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{name="demo",controller="demo"} `));
  if (!line) throw new Error(`${name} is not exposed:\n${text}`);
  return Number(line.split(" ").at(-1));
}

describe("workqueue in-flight gauges", () => {
  it("show the longest-running reconcile and the sum of all in flight, and fall to 0 once they finish", async () => {
    const clock = new FakeClock(0);
    const metrics = new EngineMetrics();
    const queue: WorkQueue = new WorkQueue({
      concurrency: 2,
      clock,
      observer: metrics.queueObserver(
        "demo",
        () => queue.depth,
        () => queue.running(),
      ),
    });
    const finish: Array<() => void> = [];
    queue.start(() => new Promise((resolve) => finish.push(() => resolve({ kind: "awaitChange" }))));
    queue.add("a");
    clock.advance(3_000);
    queue.add("b");
    clock.advance(2_000);
    await Promise.resolve();
    expect(finish).toHaveLength(2);

    expect(await gauge(metrics, "workqueue_longest_running_processor_seconds")).toBe(5);
    expect(await gauge(metrics, "workqueue_unfinished_work_seconds")).toBe(7);

    for (const done of finish) done();
    await queue.shutdown();
    expect(await gauge(metrics, "workqueue_longest_running_processor_seconds")).toBe(0);
    expect(await gauge(metrics, "workqueue_unfinished_work_seconds")).toBe(0);
  });
});
