/** Time as an injected dependency: the contract every part of the engine reads time and waits through. */

/** Opaque handle of a scheduled callback. */
export type TimerHandle = { readonly cancel: () => void };

/** The only way the runtime and the backends read time or wait, so tests can drive them with a fake clock. */
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
