/**
 * The line of creates waiting for a slot: at most `parallelCreates` kind creates run at once on a Docker host
 * (kubeadm gives up on a control plane slow to come up on a busy one). First come, first started; a restarted
 * engine orders them again, so the line lives in this instance only.
 */
import type { Logger } from "../../api/logger.ts";
import type { KeyedLock } from "../../util/keyed-lock.ts";
import { type LineView, mayStartCreate } from "./create-lifecycle.ts";
import type { CreateOrder } from "./create-process.ts";

/** What the line acts through. */
export interface CreateLineParts {
  readonly parallelCreates: number;
  /** How many creates run from this backend's state folder now. */
  readonly running: () => number;
  /** Starts the create (throws when it cannot). */
  readonly start: (order: CreateOrder) => void;
  /** Records the create as queued, so that it is known for one while it waits. */
  readonly recordQueued: (order: CreateOrder) => void;
  /** Whether the create's record still says queued (a delete meanwhile removed it). */
  readonly stillQueued: (cluster: string) => boolean;
  /** Orders the work on one cluster with the backend's other calls on it. */
  readonly lock: KeyedLock;
  readonly log: Logger;
}

export class CreateLine {
  readonly #parts: CreateLineParts;
  #waiting: CreateOrder[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(parts: CreateLineParts) {
    this.#parts = parts;
  }

  has(cluster: string): boolean {
    return this.#waiting.some((waiting) => waiting.cluster === cluster);
  }

  /** The line as the cluster's create sees it. */
  viewOf(cluster: string): LineView {
    return {
      position: this.#waiting.findIndex((waiting) => waiting.cluster === cluster) + 1,
      waiting: this.#waiting.length,
      parallelCreates: this.#parts.parallelCreates,
    };
  }

  /** Takes the cluster's create out of the line (it is being deleted). */
  remove(cluster: string): void {
    this.#waiting = this.#waiting.filter((waiting) => waiting.cluster !== cluster);
  }

  /** Starts the create now if a slot is free and none waits before it, else puts it in line. */
  startOrQueue(order: CreateOrder): void {
    const { parallelCreates, running, start, recordQueued, log } = this.#parts;
    if (mayStartCreate(this.#waiting.length, running(), parallelCreates)) {
      start(order);
      return;
    }
    if (this.has(order.cluster)) return;
    recordQueued(order);
    this.#waiting.push(order);
    log.info("kind create waits for a free slot", {
      cluster: order.cluster,
      parallelCreates,
      waiting: this.#waiting.length,
    });
    this.#poll();
  }

  /** Looks again in 2 s whether a slot is free, while creates wait. */
  #poll(): void {
    if (this.#timer !== undefined || this.#waiting.length === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#startWaiting();
    }, 2_000);
    this.#timer.unref();
  }

  async #startWaiting(): Promise<void> {
    const { parallelCreates, running, lock } = this.#parts;
    while (this.#waiting.length > 0 && mayStartCreate(0, running(), parallelCreates)) {
      const next = this.#waiting[0] as CreateOrder;
      await lock.run(next.cluster, async () => this.#startFirst(next));
    }
    this.#poll();
  }

  #startFirst(next: CreateOrder): void {
    this.#waiting = this.#waiting.filter((waiting) => waiting !== next);
    // Deleted while it waited: its record went with it.
    if (!this.#parts.stillQueued(next.cluster)) return;
    try {
      this.#parts.start(next);
    } catch (error) {
      // Its record stays queued with no waiter: observed absent, so the engine orders it again.
      this.#parts.log.warn("kind create could not start", {
        cluster: next.cluster,
        error: (error as Error).message,
      });
    }
  }
}
