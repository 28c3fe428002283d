/** A keyed work queue: deduplicated, one worker per key, per-key exponential backoff, delayed adds. */

import { type Clock, systemClock, type TimerHandle } from "../clock.ts";
import { type BackoffOptions, backoffDelay, RECONCILE_RETRY_BACKOFF } from "./backoff.ts";
import { classifyFailure, type FailureHandling } from "./error-policy.ts";
import { Outcome } from "./outcome.ts";

/** Reconciles one key. What a throw means is the error policy's to say ({@link classifyFailure}). */
export type KeyHandler = (key: string) => Promise<Outcome>;

/** Told what the queue does, for metrics; every method must be cheap and must not throw. */
export interface WorkQueueObserver {
  /** A key was added (counted even when it was already waiting). */
  added(): void;
  /** A worker took a key that waited `waitedMs` since it was queued. */
  started(waitedMs: number): void;
  /** A reconcile ended after `workedMs`; `outcome` says how. */
  finished(workedMs: number, outcome: "success" | "requeue_after" | "error"): void;
  /** A failed key was scheduled again with backoff. */
  retried(): void;
}

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** How many different keys may be processed at once. Default 1. */
  readonly concurrency?: number;
  /** Per-key retry delays after failed reconciles; default {@link RECONCILE_RETRY_BACKOFF}. */
  readonly backoff?: BackoffOptions;
  readonly clock?: Clock;
  /**
   * Told about every reconcile that threw (for logs and Events), with how the error policy handles it and
   * when the key runs again (undefined: not before it changes); must not throw.
   */
  readonly onError?: (
    key: string,
    error: unknown,
    retryInMs: number | undefined,
    handling: FailureHandling,
  ) => void;
  readonly observer?: WorkQueueObserver;
  /**
   * Whether a key is this queue's to process now (sharded mode: the replica owns it); asked when it is
   * added and again when it comes off the queue. A key refused is forgotten: whoever refused it adds it
   * again when that changes.
   */
  readonly admits?: (key: string) => boolean;
}

/**
 * Flow: `add` puts a key in a FIFO unless it is already waiting; a worker takes it, and while it is
 * being processed further adds only mark it dirty, so it runs again right after — never two workers on
 * one key. The handler's outcome decides what follows: awaitChange forgets the key's failures;
 * requeueAfter forgets them and adds the key after the delay; an error goes to the error policy
 * ({@link classifyFailure}), which retries it after its backoff, waits as asked, or gives up on it.
 *
 * Guarantees: a key added at any time is processed at least once after that add (no lost wake-up).
 * Delayed adds of one key keep only the earliest deadline.
 */
export class WorkQueue {
  readonly #concurrency: number;
  readonly #backoff: BackoffOptions;
  readonly #clock: Clock;
  readonly #onError: NonNullable<WorkQueueOptions["onError"]>;
  readonly #observer: WorkQueueObserver | undefined;
  readonly #admits: (key: string) => boolean;
  /** When each waiting key was queued, for the time-in-queue metric. */
  readonly #queuedAt = new Map<string, number>();
  readonly #fifo: string[] = [];
  readonly #waiting = new Set<string>();
  /** Keys being processed, with when each started. */
  readonly #processing = new Map<string, number>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new Map<string, { readonly at: number; readonly timer: TimerHandle }>();
  readonly #idle: Array<() => void> = [];
  #handler: KeyHandler | undefined;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#concurrency = Math.max(1, options.concurrency ?? 1);
    this.#backoff = options.backoff ?? RECONCILE_RETRY_BACKOFF;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => {});
    this.#observer = options.observer;
    this.#admits = options.admits ?? (() => true);
  }

  /** Keys waiting to be processed now (not counting delayed or in-flight ones). */
  get depth(): number {
    return this.#fifo.length;
  }

  /** Keys being processed right now. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /** How long each reconcile in flight has been running, in ms. */
  running(): number[] {
    const now = this.#clock.now();
    return [...this.#processing.values()].map((since) => now - since);
  }

  /** Consecutive failures of `key` since its last success. */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Asks for `key` to be processed as soon as a worker is free. */
  add(key: string): void {
    if (this.#shuttingDown || !this.#admits(key)) return;
    this.#observer?.added();
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#waiting.has(key)) return;
    this.#waiting.add(key);
    this.#queuedAt.set(key, this.#clock.now());
    this.#fifo.push(key);
    this.#pump();
  }

  /** Asks for `key` to be processed after `ms` milliseconds; an earlier pending deadline wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.timer.cancel();
    const timer = this.#clock.schedule(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    this.#delayed.set(key, { at, timer });
  }

  /** Starts processing with `handler`. Call once. */
  start(handler: KeyHandler): void {
    if (this.#handler) throw new Error("WorkQueue.start called twice");
    this.#handler = handler;
    this.#pump();
  }

  /** Stops taking work, drops delayed adds, and resolves once in-flight reconciles have finished. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) timer.cancel();
    this.#delayed.clear();
    this.#fifo.length = 0;
    this.#waiting.clear();
    this.#queuedAt.clear();
    this.#dirty.clear();
    if (this.#processing.size === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    const handler = this.#handler;
    if (!handler || this.#shuttingDown) return;
    while (this.#processing.size < this.#concurrency && this.#fifo.length > 0) {
      const key = this.#fifo.shift() as string;
      this.#waiting.delete(key);
      if (!this.#admits(key)) {
        this.#queuedAt.delete(key);
        continue;
      }
      this.#processing.set(key, this.#clock.now());
      this.#observer?.started(this.#clock.now() - (this.#queuedAt.get(key) ?? this.#clock.now()));
      this.#queuedAt.delete(key);
      void this.#process(key, handler);
    }
  }

  async #process(key: string, handler: KeyHandler): Promise<void> {
    const started = this.#clock.now();
    try {
      const outcome = await handler(key);
      this.#observer?.finished(
        this.#clock.now() - started,
        outcome.kind === "requeueAfter" ? "requeue_after" : "success",
      );
      this.#apply(key, outcome);
    } catch (error) {
      this.#fail(key, error, this.#clock.now() - started);
    } finally {
      this.#processing.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
      if (this.#processing.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
      this.#pump();
    }
  }

  /** The one place that maps an outcome to what the queue does next. */
  #apply(key: string, outcome: Outcome): void {
    this.#failures.delete(key);
    if (outcome.kind === "requeueAfter") this.addAfter(key, outcome.ms);
  }

  /** The one place that maps a failed reconcile to what the queue does next, as the error policy says. */
  #fail(key: string, error: unknown, workedMs: number): void {
    const handling = classifyFailure(error);
    switch (handling.kind) {
      case "requeueAfter":
        // Not a failure: the reconcile only has to wait, so it counts as a requeue and keeps no backoff.
        this.#observer?.finished(workedMs, "requeue_after");
        this.#onError(key, error, handling.ms, handling);
        this.#apply(key, Outcome.requeueAfter(handling.ms));
        return;
      case "terminal":
        this.#observer?.finished(workedMs, "error");
        this.#failures.delete(key);
        this.#onError(key, error, undefined, handling);
        return;
      case "retry": {
        this.#observer?.finished(workedMs, "error");
        const failures = (this.#failures.get(key) ?? 0) + 1;
        this.#failures.set(key, failures);
        const delay = backoffDelay(failures, this.#backoff);
        this.#onError(key, error, delay, handling);
        this.#observer?.retried();
        this.addAfter(key, delay);
      }
    }
  }
}
