/** The work queue every controller uses: its metrics, and one way of logging what the error policy made of a failed reconcile. */
import type { Clock } from "../clock.ts";
import { apiStatusOf, errorMessage, type Logger } from "../logger.ts";
import type { EngineMetrics } from "../metrics.ts";
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
 * A {@link WorkQueue} reporting to the controller metrics, logging every reconcile that threw by how the
 * error policy handles it: a failure to retry as a warning, a conflict (someone wrote first; the retry
 * re-reads) or a wait the API server asked for at debug, one given up on as an error. A write held back
 * by the write-loop guard is not logged again: the guard has logged it, with a metric and an Event.
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
    onError: failureLogger(props.log),
  });
  return queue;
}

/** Logs a failed reconcile at the level its handling calls for. */
function failureLogger(log: Logger): NonNullable<WorkQueueOptions["onError"]> {
  return (key, error, retryInMs, handling) => {
    const status = apiStatusOf(error);
    const fields = { key, error: errorMessage(error), ...(status ? { status } : {}) };
    switch (handling.kind) {
      case "retry":
        log[handling.expected ? "debug" : "warn"]("reconcile failed", { ...fields, retryInMs });
        return;
      case "requeueAfter":
        if (handling.reason === "throttled")
          log.debug("throttled by the API server; waiting as it asks", { key, retryAfterMs: handling.ms });
        return;
      case "terminal":
        log.error("reconcile failed; retrying cannot help, so not before the object changes", fields);
    }
  };
}
