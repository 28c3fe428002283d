import { describe, expect, it } from "vitest";
import { measureWork, PACE_LIMITS, pace, paceOf, paceOfLoad, scenarioPace } from "../../support/pace.ts";

describe("the machine's pace", () => {
  it("is wall-clock over CPU time of the work, within its limits", () => {
    expect(paceOf({ wallMs: 20, cpuMs: 10 })).toBe(2);
    expect(paceOf({ wallMs: 20, cpuMs: 21 })).toBe(PACE_LIMITS.min); // other threads' CPU counted too: never below 1
    expect(paceOf({ wallMs: 20, cpuMs: 1 })).toBe(PACE_LIMITS.max); // a wait that needs more than three times is a finding
    expect(paceOf({ wallMs: 20, cpuMs: 0 })).toBe(PACE_LIMITS.max); // no CPU given at all
  });

  it("measures real work: CPU time given, at most the wall-clock time it took (one thread)", () => {
    const { wallMs, cpuMs } = measureWork(10);
    expect(wallMs).toBeGreaterThanOrEqual(10);
    expect(cpuMs).toBeGreaterThan(0);
    const now = pace();
    expect(now).toBeGreaterThanOrEqual(PACE_LIMITS.min);
    expect(now).toBeLessThanOrEqual(PACE_LIMITS.max);
  });

  it("from the load average: 1 while each runnable process has a core, slower beyond, never past the limit", () => {
    expect(paceOfLoad(0.5, 2)).toBe(PACE_LIMITS.min);
    expect(paceOfLoad(2, 2)).toBe(1);
    expect(paceOfLoad(5, 2)).toBe(2.5);
    expect(paceOfLoad(12, 2)).toBe(PACE_LIMITS.max);
    expect(paceOfLoad(3, 0)).toBe(PACE_LIMITS.max); // no core reported: counted as one
    const now = scenarioPace();
    expect(now).toBeGreaterThanOrEqual(PACE_LIMITS.min);
    expect(now).toBeLessThanOrEqual(PACE_LIMITS.max);
  });
});
