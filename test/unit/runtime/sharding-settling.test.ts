/** The settle window a joining replica waits for (settling.ts): quiet members, or the bound. */
import { describe, expect, it } from "vitest";
import { MembershipSettling, settleTimingFor } from "../../../src/runtime/sharding/settling.ts";

const TIMING = { quietMs: 6_000, maxWaitMs: 15_000 };

describe("a joining replica's settle window", () => {
  it("is closed before the first list", () => {
    expect(new MembershipSettling(TIMING).settled(100_000, 0)).toBe(false);
  });

  it("closes for a replica alone once its members have stayed the same for the quiet window after its Lease was created", () => {
    const settling = new MembershipSettling(TIMING);
    settling.observe(["a"], 0); // the list before the create
    const createdAt = 50;
    for (let at = 2_000; at < 6_050; at += 2_000) {
      expect(settling.observe(["a"], at)).toBe(false);
      expect(settling.settled(at, createdAt), `at ${at}`).toBe(false);
    }
    expect(settling.settled(6_050, createdAt)).toBe(true);
  });

  it("starts again when a peer comes or goes, so peers created within the window of each other meet first", () => {
    const settling = new MembershipSettling(TIMING);
    settling.observe(["a"], 0);
    expect(settling.observe(["a", "b"], 4_000)).toBe(true);
    expect(settling.settled(8_000, 10)).toBe(false);
    expect(settling.observe(["a", "b", "c"], 9_000)).toBe(true);
    expect(settling.settled(14_000, 10)).toBe(false);
    expect(settling.observe(["a", "c"], 14_000)).toBe(true);
    expect(settling.since).toBe(14_000);
    expect(settling.settled(15_000, 10)).toBe(false);
    expect(settling.settled(15_010, 10)).toBe(true); // the bound
  });

  it("keeps the start of a replica whose ring keeps changing within the bound after its Lease was created", () => {
    const settling = new MembershipSettling(TIMING);
    const createdAt = 1_000;
    let members = ["a"];
    for (let at = 0; at < 30_000; at += 2_000) {
      members = [...members, `p${at}`].sort();
      settling.observe(members, at);
      expect(settling.settled(at, createdAt), `at ${at}`).toBe(at - createdAt >= TIMING.maxWaitMs);
    }
  });

  it("defaults to three retry periods of quiet, at most a lease duration", () => {
    expect(
      settleTimingFor({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }),
    ).toEqual({ quietMs: 6_000, maxWaitMs: 15_000 });
    expect(settleTimingFor({ leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toEqual(
      { quietMs: 6_000, maxWaitMs: 6_000 },
    );
  });
});
