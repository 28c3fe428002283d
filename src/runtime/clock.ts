/** Time as an injected dependency, so the runtime's delays can be driven by a fake clock in tests. */

/** Opaque handle of a scheduled callback. */
export type TimerHandle = { readonly cancel: () => void };

/** The only way the runtime reads time or waits. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `ms` milliseconds; the timer never keeps the process alive. */
  schedule(callback: () => void, ms: number): TimerHandle;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
