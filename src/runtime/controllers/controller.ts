/** What the engine runs: anything that watches caches and reconciles keys, started and stopped as one. */

/** A controller of the engine; the engine calls `watch`, starts the caches, then `run`, and at the end `stop`. */
export interface Controller {
  /** The controller's name in logs and metrics (`controller` label). */
  readonly name: string;
  /** Registers cache handlers and makes the caches it reads; before the caches start, so the first list is seen. */
  watch(): void;
  /** Starts reconciling; once the caches have synced, so no decision is made on a partial cache. */
  run(): void;
  /** Waits for reconciles in flight; the engine stops the caches. */
  stop(): Promise<void>;
}
