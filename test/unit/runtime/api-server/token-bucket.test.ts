/** The client-side rate limiter: never faster than qps after the burst, first come first served, nobody starved. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TokenBucket } from "../../../../src/runtime/api-server/token-bucket.ts";
import { FakeClock } from "../../../support/fake-clock.ts";

describe("TokenBucket", () => {
  it("grants the burst at once, then one token per 1/qps seconds", async () => {
    const clock = new FakeClock(1_000);
    const bucket = new TokenBucket({ qps: 10, burst: 3, clock });
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    let granted = 0;
    void bucket.take().then(() => granted++);
    await Promise.resolve();
    expect(granted).toBe(0);
    clock.advance(99);
    await Promise.resolve();
    expect(granted).toBe(0);
    clock.advance(1);
    await Promise.resolve();
    expect(granted).toBe(1);
  });

  it("refuses a rate or burst that would never grant anything", () => {
    const clock = new FakeClock();
    expect(() => new TokenBucket({ qps: 0, burst: 1, clock })).toThrow(/qps/);
    expect(() => new TokenBucket({ qps: 5, burst: 0, clock })).toThrow(/burst/);
  });

  it("over any arrival pattern: at most burst + qps·t granted by time t, in arrival order, all served in the end", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(fc.nat({ max: 500 }), fc.integer({ min: 1, max: 5 })), { maxLength: 30 }),
        async (qps, burst, arrivals) => {
          const clock = new FakeClock(0);
          const bucket = new TokenBucket({ qps, burst, clock });
          const grants: Array<{ id: number; at: number }> = [];
          let next = 0;
          const settle = async () => {
            for (let i = 0; i < 5; i++) await Promise.resolve();
          };
          for (const [waitMs, count] of arrivals) {
            clock.advance(waitMs);
            await settle();
            for (let i = 0; i < count; i++) {
              const id = next++;
              void bucket.take().then(() => grants.push({ id, at: clock.now() }));
            }
            await settle();
          }
          // Long enough for every waiter: the whole demand at the rate.
          for (let i = 0; i < next + 2; i++) {
            clock.advance(Math.ceil(1_000 / qps));
            await settle();
          }
          expect(grants.map((g) => g.id)).toEqual([...Array(next).keys()]);
          for (const [index, grant] of grants.entries()) {
            expect(index + 1).toBeLessThanOrEqual(burst + (qps * grant.at) / 1_000 + 1e-9);
          }
          expect(bucket.waiting).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
