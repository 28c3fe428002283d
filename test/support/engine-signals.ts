/** Positive signals that the engine has looked, from its Prometheus metrics and caches: wait for one before asserting that nothing happened. */
import { expect } from "vitest";
import type { EngineMetrics } from "../../src/runtime/metrics.ts";
import { type EventuallyOptions, eventually } from "./eventually.ts";

/** The sum of the samples of `name` (a counter, a gauge, or a histogram's `…_count`) whose labels include `labels`. */
export async function metricSum(
  metrics: EngineMetrics,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<number> {
  let sum = 0;
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    for (const sample of metric.values) {
      const sampleName = (sample as { readonly metricName?: string }).metricName ?? metric.name;
      if (sampleName !== name) continue;
      if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) sum += sample.value;
    }
  }
  return sum;
}

/** How many reconciles `controller` has finished, whatever their result (`controller_runtime_reconcile_total`). */
export const reconciles = (metrics: EngineMetrics, controller: string): Promise<number> =>
  metricSum(metrics, "controller_runtime_reconcile_total", { controller });

/**
 * Whether no controller has work at this moment: nothing queued, and every reconcile that started has
 * finished. Finished is read before started, so equal counts mean nothing was in flight in between.
 */
export async function idle(metrics: EngineMetrics): Promise<boolean> {
  const depth = await metricSum(metrics, "workqueue_depth");
  const finished = await metricSum(metrics, "controller_runtime_reconcile_total");
  const started = await metricSum(metrics, "workqueue_queue_duration_seconds_count");
  return depth === 0 && started === finished;
}

/** An object as far as {@link caughtUp} reads it. */
interface Versioned {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
  };
}

/**
 * Waits until the engine has reacted to `objects` as the API server holds them now: its `cache` (an
 * informer of the engine) holds each one's current resourceVersion, so the event that queued it has
 * arrived, and then no controller has work, so the reconcile it caused has finished. Only after this may
 * a test assert that a reconcile changed nothing.
 */
export async function caughtUp(
  engine: { readonly metrics: EngineMetrics },
  cache: { list(): readonly Versioned[] },
  objects: () => Promise<readonly Versioned[]>,
  options: EventuallyOptions = {},
): Promise<void> {
  await eventually(
    async () => {
      for (const object of await objects()) {
        const { name, namespace, resourceVersion } = object.metadata ?? {};
        const cached = cache
          .list()
          .find((entry) => entry.metadata?.name === name && entry.metadata?.namespace === namespace);
        expect(cached?.metadata?.resourceVersion, `the engine's copy of ${namespace}/${name}`).toBe(
          resourceVersion,
        );
      }
      expect(await idle(engine.metrics), "every controller queue idle").toBe(true);
    },
    { what: "the engine to catch up with the objects and finish its reconciles", ...options },
  );
}
