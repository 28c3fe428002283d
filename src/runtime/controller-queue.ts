/** The work queue every controller uses: its metrics, and one way of logging failed reconciles. */
import type { Clock } from "./clock.ts";
import { apiStatusOf, errorMessage, type Logger } from "./logger.ts";
import type { EngineMetrics } from "./metrics.ts";
import { ConflictError } from "./patch-object.ts";
import { WorkQueue, type WorkQueueOptions } from "./work-queue.ts";

/** What a controller's queue needs. */
export interface ControllerQueueProps {
  /** The controller's name in metrics (`controller` label). */
  readonly name: string;
  readonly concurrency?: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: EngineMetrics;
  /** See {@link WorkQueueOptions.admits}. */
  readonly admits?: (key: string) => boolean;
}

/**
 * A {@link WorkQueue} reporting to the controller metrics; failed reconciles are logged as warnings,
 * except conflicts (someone wrote first; the retry re-reads), which are normal and logged at debug.
 */
export function controllerQueue(props: ControllerQueueProps): WorkQueue {
  const queue: WorkQueue = new WorkQueue({
    ...(props.concurrency === undefined ? {} : { concurrency: props.concurrency }),
    clock: props.clock,
    ...(props.admits ? { admits: props.admits } : {}),
    ...(props.metrics
      ? {
          observer: props.metrics.queueObserver(
            props.name,
            () => queue.depth,
            () => queue.running(),
          ),
        }
      : {}),
    onError: (key, error, retryInMs) => {
      const level = error instanceof ConflictError ? "debug" : "warn";
      const status = apiStatusOf(error);
      props.log[level]("reconcile failed", {
        key,
        error: errorMessage(error),
        ...(status ? { status } : {}),
        retryInMs,
      });
    },
  });
  return queue;
}
