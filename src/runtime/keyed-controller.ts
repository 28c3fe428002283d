/** The shape every controller of the engine shares: a keyed work queue, `run` starts it, `stop` drains it. */
import { type Clock, systemClock } from "./clock.ts";
import type { Controller } from "./controller.ts";
import { controllerQueue } from "./controller-queue.ts";
import { type Logger, silentLogger } from "./logger.ts";
import type { EngineMetrics } from "./metrics.ts";
import { Outcome } from "./outcome.ts";
import { throttledFor } from "./throttling.ts";
import type { WorkQueue } from "./work-queue.ts";

/** What every keyed controller is built with. */
export interface KeyedControllerProps {
  /** The controller's name in logs and metrics (`controller` label). */
  readonly name: string;
  /** Different keys reconciled at once (never two of one key). Default 1. */
  readonly concurrency?: number;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly metrics?: EngineMetrics;
}

/**
 * A controller whose work is keys: subclasses say which cache events queue which keys (`watch`) and
 * what one reconcile of a key does (`reconcile`, level-based, returning an {@link Outcome}).
 */
export abstract class KeyedController implements Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  protected readonly clock: Clock;
  protected readonly log: Logger;

  constructor(props: KeyedControllerProps) {
    this.name = props.name;
    this.clock = props.clock ?? systemClock;
    this.log = (props.log ?? silentLogger).with({ controller: props.name });
    this.queue = controllerQueue({
      name: props.name,
      clock: this.clock,
      log: this.log,
      ...(props.concurrency === undefined ? {} : { concurrency: props.concurrency }),
      ...(props.metrics ? { metrics: props.metrics } : {}),
    });
  }

  abstract watch(): void;

  /** One reconcile of `key`; errors are thrown, and the queue retries them with backoff. */
  abstract reconcile(key: string): Promise<Outcome>;

  run(): void {
    this.queue.start(async (key) => {
      try {
        return await this.reconcile(key);
      } catch (error) {
        // Throttled by the API server (429): wait as long as it asks, as a requeue, not a failure.
        const waitMs = throttledFor(error);
        if (waitMs === undefined) throw error;
        this.log.debug("throttled by the API server; waiting as it asks", { key, retryAfterMs: waitMs });
        return Outcome.requeueAfter(waitMs);
      }
    });
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }
}
