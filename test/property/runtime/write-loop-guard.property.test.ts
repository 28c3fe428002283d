/** The write-loop guard's bounds, for any sequence of writes: never more than maxWrites per window and writer, nothing while held, one Event per loop. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { heldBackFor } from "../../../src/runtime/controllers/errors.ts";
import { asWriter, WriteLoopGuard } from "../../../src/runtime/controllers/write-loop-guard.ts";
import type { EventRecord } from "../../../src/runtime/event-recorder.ts";
import { silentLogger } from "../../../src/runtime/logger.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const LIMITS = { maxWrites: 4, windowMs: 1_000, holdMs: 500, maxHoldMs: 4_000 };

/** One write attempt: after `afterMs`, writer `writer` writes object `object`. */
interface Attempt {
  readonly afterMs: number;
  readonly object: string;
  readonly writer: string;
}

const attempt: fc.Arbitrary<Attempt> = fc.record({
  afterMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3_000 })),
  object: fc.constantFrom("a", "b"),
  writer: fc.constantFrom("k1", "k2"),
});

interface Outcome {
  readonly at: number;
  readonly key: string;
  readonly admitted: boolean;
  /** For a refused write: how long the guard said to wait. */
  readonly retryAfterMs: number | undefined;
}

async function run(attempts: readonly Attempt[]) {
  const clock = new FakeClock(0);
  const events: EventRecord[] = [];
  const guard = new WriteLoopGuard({
    clock,
    log: silentLogger,
    providerName: "p",
    limits: LIMITS,
    sendEvent: (_subject, event) => events.push(event),
  });
  const outcomes: Outcome[] = [];
  for (const { afterMs, object, writer } of attempts) {
    clock.advance(afterMs);
    const target = { group: "g", version: "v1", plural: "things", name: object };
    let retryAfterMs: number | undefined;
    try {
      await asWriter({ controller: "c", key: writer }, async () => guard.enter(target));
    } catch (error) {
      retryAfterMs = heldBackFor(error);
      if (retryAfterMs === undefined) throw error;
    }
    outcomes.push({
      at: clock.now(),
      key: `${object}|${writer}`,
      admitted: retryAfterMs === undefined,
      retryAfterMs,
    });
  }
  return { outcomes, events };
}

describe("WriteLoopGuard, for any sequence of writes", () => {
  it("admits at most maxWrites of one object by one writer in any window, and nothing before a hold it announced ends", async () => {
    const seen = { loops: 0, refusedWhileHeld: 0, admittedAfterHold: 0 };
    await fc.assert(
      // Sequences of any length up to 120 (the default size keeps them near 10 writes, which reach a loop, a
      // refused write and one admitted after its hold only now and then).
      fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 120, size: "max" }), async (attempts) => {
        const { outcomes, events } = await run(attempts);
        const byKey = Map.groupBy(outcomes, (o) => o.key);
        for (const list of byKey.values()) {
          const admitted = list.filter((o) => o.admitted).map((o) => o.at);
          for (const [i, at] of admitted.entries()) {
            const inWindow = admitted.slice(i).filter((other) => other < at + LIMITS.windowMs).length;
            expect(inWindow).toBeLessThanOrEqual(LIMITS.maxWrites);
          }
          let heldUntil = -1;
          for (const outcome of list) {
            if (outcome.at < heldUntil) {
              expect(outcome.admitted, `a write at ${outcome.at}, held until ${heldUntil}`).toBe(false);
              seen.refusedWhileHeld++;
            } else if (heldUntil > 0 && outcome.admitted) seen.admittedAfterHold++;
            if (!outcome.admitted) {
              expect(outcome.retryAfterMs).toBeGreaterThan(0);
              expect(outcome.retryAfterMs).toBeLessThanOrEqual(LIMITS.maxHoldMs);
              heldUntil = outcome.at + (outcome.retryAfterMs ?? 0);
            }
          }
        }
        // One Warning Event per loop (a loop starts a hold), none per refused write.
        const loops = outcomes.filter(
          (o, i) =>
            !o.admitted &&
            !outcomes
              .slice(0, i)
              .some((p) => p.key === o.key && !p.admitted && p.at + (p.retryAfterMs ?? 0) > o.at),
        ).length;
        expect(events).toHaveLength(loops);
        expect(events.every((e) => e.type === "Warning" && e.reason === "WriteLoop")).toBe(true);
        seen.loops += loops;
      }),
      {
        numRuns: 300,
        // A loop, a write refused while held, and one admitted after the hold, in every run of the check:
        // random sequences reach each of them only most of the time.
        examples: [
          [
            [
              ...Array.from({ length: 5 }, () => ({ afterMs: 0, object: "a", writer: "k1" })),
              { afterMs: 10, object: "a", writer: "k1" },
              { afterMs: 1_000, object: "a", writer: "k1" },
            ],
          ],
        ],
      },
    );
    // The interesting branches were reached.
    expect(seen.loops).toBeGreaterThan(0);
    expect(seen.refusedWhileHeld).toBeGreaterThan(0);
    expect(seen.admittedAfterHold).toBeGreaterThan(0);
  });

  it("never refuses a writer that stays below maxWrites per window", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: LIMITS.windowMs / LIMITS.maxWrites, max: 5_000 }), { maxLength: 200 }),
        async (gaps) => {
          const { outcomes, events } = await run(
            gaps.map((afterMs) => ({ afterMs, object: "a", writer: "k1" })),
          );
          expect(outcomes.every((o) => o.admitted)).toBe(true);
          expect(events).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
