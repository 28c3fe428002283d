/** The work queue: dedupe, one worker per key, concurrency, backoff, requeue-after, shutdown — on a fake clock. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../../../src/runtime/controllers/backoff.ts";
import { TerminalError } from "../../../../src/runtime/controllers/errors.ts";
import { Outcome } from "../../../../src/runtime/controllers/outcome.ts";
import { WorkQueue } from "../../../../src/runtime/controllers/work-queue.ts";
import { FakeClock, settle } from "../../../support/fake-clock.ts";

/** Lets pending promise callbacks run. */

/** A handler whose calls stay open until the test resolves them. */
function controllableHandler() {
  const calls: Array<{ key: string; finish: (outcome?: Outcome | Error) => void }> = [];
  const handler = (key: string) =>
    new Promise<Outcome>((resolve, reject) => {
      calls.push({
        key,
        finish: (outcome = Outcome.awaitChange()) =>
          outcome instanceof Error ? reject(outcome) : resolve(outcome),
      });
    });
  return { calls, handler };
}

describe("backoffDelay", () => {
  it("doubles from the base and stops at the cap", () => {
    const options = { baseMs: 5, maxMs: 1_000 };
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, options))).toEqual([5, 10, 20, 40]);
    expect(backoffDelay(20, options)).toBe(1_000);
    expect(backoffDelay(10_000, options)).toBe(1_000);
  });

  it("never decreases and never exceeds the cap", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 100 }),
        (failures, baseMs) => {
          const options = { baseMs, maxMs: 300_000 };
          const delay = backoffDelay(failures, options);
          expect(delay).toBeLessThanOrEqual(options.maxMs);
          expect(backoffDelay(failures + 1, options)).toBeGreaterThanOrEqual(delay);
        },
      ),
    );
  });
});

describe("WorkQueue", () => {
  it("processes a key added many times while waiting only once", async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    const seen: string[] = [];
    queue.add("a");
    queue.add("a");
    queue.add("b");
    queue.add("a");
    queue.start(async (key) => {
      seen.push(key);
      return Outcome.awaitChange();
    });
    await settle();
    expect(seen).toEqual(["a", "b"]);
  });

  it("processes only the keys it admits, asked both when a key is added and when it is taken", async () => {
    const ours = new Set(["a", "b", "c"]);
    const queue = new WorkQueue({ clock: new FakeClock(), admits: (key) => ours.has(key) });
    const seen: string[] = [];
    queue.add("a");
    queue.add("x"); // never ours: not even queued
    queue.add("b");
    queue.add("c");
    expect(queue.depth).toBe(3);
    ours.delete("b"); // handed to another replica while waiting
    queue.start(async (key) => {
      seen.push(key);
      return Outcome.awaitChange();
    });
    await settle();
    expect(seen).toEqual(["a", "c"]);
    expect(queue.depth).toBe(0);
    ours.add("b"); // handed back: whoever refused it adds it again
    queue.add("b");
    await settle();
    expect(seen).toEqual(["a", "c", "b"]);
  });

  it("never runs two workers on one key, and reruns a key changed during its reconcile", async () => {
    const { calls, handler } = controllableHandler();
    const queue = new WorkQueue({ concurrency: 4, clock: new FakeClock() });
    queue.start(handler);
    queue.add("a");
    await settle();
    queue.add("a"); // arrives while "a" is being processed
    await settle();
    expect(calls.map((c) => c.key)).toEqual(["a"]);
    calls[0]?.finish();
    await settle();
    expect(calls.map((c) => c.key)).toEqual(["a", "a"]);
  });

  it("runs up to `concurrency` different keys at once", async () => {
    const { calls, handler } = controllableHandler();
    const queue = new WorkQueue({ concurrency: 2, clock: new FakeClock() });
    queue.start(handler);
    for (const key of ["a", "b", "c"]) queue.add(key);
    await settle();
    expect(calls.map((c) => c.key)).toEqual(["a", "b"]);
    expect(queue.inFlight).toBe(2);
    expect(queue.depth).toBe(1);
    calls[1]?.finish();
    await settle();
    expect(calls.map((c) => c.key)).toEqual(["a", "b", "c"]);
  });

  it("retries a failing key with growing backoff and forgets failures after a success", async () => {
    const clock = new FakeClock();
    const errors: Array<number | undefined> = [];
    const queue = new WorkQueue({
      clock,
      backoff: { baseMs: 10, maxMs: 1_000 },
      onError: (_key, _error, retryInMs) => errors.push(retryInMs),
    });
    let attempts = 0;
    queue.start(async () => {
      attempts++;
      if (attempts <= 3) throw new Error("backend down");
      return Outcome.awaitChange();
    });
    queue.add("a");
    await settle();
    expect(errors).toEqual([10]);
    clock.advance(9);
    await settle();
    expect(attempts).toBe(1);
    clock.advance(1);
    await settle();
    expect(errors).toEqual([10, 20]);
    clock.advance(20);
    await settle();
    expect(errors).toEqual([10, 20, 40]);
    expect(queue.failures("a")).toBe(3);
    clock.advance(40);
    await settle();
    expect(attempts).toBe(4);
    expect(queue.failures("a")).toBe(0);
  });

  it("does not retry a terminal error", async () => {
    const clock = new FakeClock();
    const retries: Array<number | undefined> = [];
    const queue = new WorkQueue({ clock, onError: (_k, _e, retryInMs) => retries.push(retryInMs) });
    queue.start(async () => {
      throw new TerminalError("spec can never be served");
    });
    queue.add("a");
    await settle();
    expect(retries).toEqual([undefined]);
    expect(clock.pending()).toEqual([]);
  });

  it("requeues after the asked delay, keeping only the earliest deadline per key", async () => {
    const clock = new FakeClock(1_000);
    const seen: number[] = [];
    const queue = new WorkQueue({ clock });
    queue.start(async () => {
      seen.push(clock.now());
      return seen.length === 1 ? Outcome.requeueAfter(500) : Outcome.awaitChange();
    });
    queue.add("a");
    await settle();
    queue.addAfter("a", 800); // later than the pending 500 ms: ignored
    queue.addAfter("a", 200); // earlier: replaces it
    expect(clock.pending()).toEqual([1_200]);
    clock.advance(200);
    await settle();
    expect(seen).toEqual([1_000, 1_200]);
  });

  it("drops waiting work on shutdown and waits for the reconcile in flight", async () => {
    const { calls, handler } = controllableHandler();
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.start(handler);
    queue.add("a");
    queue.add("b");
    queue.addAfter("c", 1_000);
    await settle();
    let stopped = false;
    const shutdown = queue.shutdown().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    calls[0]?.finish();
    await shutdown;
    clock.advance(5_000);
    queue.add("d");
    await settle();
    expect(calls.map((c) => c.key)).toEqual(["a"]);
  });

  it("processes every added key at least once after its last add, whatever the interleaving", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom("a", "b", "c"), finishFirst: fc.boolean() }), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 3 }),
        async (steps, concurrency) => {
          const { calls, handler } = controllableHandler();
          const queue = new WorkQueue({ concurrency, clock: new FakeClock() });
          queue.start(handler);
          const lastAdd = new Map<string, number>();
          let finished = 0;
          for (const step of steps) {
            if (step.finishFirst && finished < calls.length) calls[finished++]?.finish();
            await settle();
            lastAdd.set(step.key, calls.length);
            queue.add(step.key);
          }
          while (finished < calls.length || queue.depth > 0) {
            calls[finished++]?.finish();
            await settle();
          }
          for (const [key, callsBefore] of lastAdd) {
            expect(calls.slice(callsBefore).some((c) => c.key === key)).toBe(true);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
