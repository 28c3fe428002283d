/** A manual clock for tests: time moves only when the test says so. */
import { expect } from "vitest";
import type { Clock, TimerHandle } from "../../src/runtime/clock.ts";

/** A {@link Clock} whose timers fire only inside {@link FakeClock.advance}. */
export class FakeClock implements Clock {
  #now: number;
  #timers: Array<{ at: number; callback: () => void; cancelled: boolean }> = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  schedule(callback: () => void, ms: number): TimerHandle {
    const timer = { at: this.#now + ms, callback, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Deadlines of the timers still pending, soonest first. */
  pending(): number[] {
    return this.#timers
      .filter((t) => !t.cancelled)
      .map((t) => t.at)
      .sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, firing due timers in deadline order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.callback();
    }
    this.#now = target;
  }
}

/** Lets the callbacks that timers and resolved promises started run to their next wait. */
export const settle = (): Promise<unknown> => new Promise((resolve) => setImmediate(resolve));

/**
 * Checks that a timer of `clock` adds one entry to `list()` exactly `ms` from now: `list()` still has
 * `before` entries 1 ms earlier, and `before + 1` at `ms`.
 */
export async function expectOneMoreAt(
  clock: FakeClock,
  ms: number,
  list: () => readonly unknown[],
  before: number,
): Promise<void> {
  clock.advance(ms - 1);
  await settle();
  expect(list()).toHaveLength(before);
  clock.advance(1);
  await settle();
  expect(list()).toHaveLength(before + 1);
}
