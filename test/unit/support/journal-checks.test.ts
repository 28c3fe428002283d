/** The journal checks on hand-made journals: which calls overlap across replicas, how many creates succeeded, which clusters moved. */
import { describe, expect, it } from "vitest";
import { createsPerCluster, handovers, overlappingCalls } from "../../support/journal-checks.ts";
import type { BackendCall } from "../../support/journaling-backend.ts";

let lines = 0;

/** Where and when a hand-made call ran; its process and line numbers are made up unless given. */
interface Span {
  readonly start: number;
  /** Absent: the call never ended. */
  readonly end?: number;
  readonly pid?: number;
  readonly startSeq?: number;
  readonly endSeq?: number;
}

/** A call of `replica` about `cluster` (a uid) during `span`; by default each replica is one process. */
function aCall(
  replica: string,
  cluster: string | null,
  span: Span,
  props: Partial<Pick<BackendCall, "method" | "ok">> = {},
): BackendCall {
  return {
    replica,
    pid: span.pid ?? Number(replica.replace(/\D/g, "")),
    method: props.method ?? "observe",
    cluster,
    start: span.start,
    startSeq: span.startSeq ?? ++lines,
    ...(span.end === undefined
      ? {}
      : { end: span.end, endSeq: span.endSeq ?? ++lines, ok: props.ok ?? true }),
  };
}

describe("overlappingCalls", () => {
  it("finds none when one replica hands a cluster over to another", () => {
    const journal = [aCall("r1", "a", { start: 100, end: 200 }), aCall("r2", "a", { start: 201, end: 300 })];
    expect(overlappingCalls(journal)).toEqual([]);
  });

  it("reports two replicas calling about one cluster at once, earlier call first", () => {
    const late = aCall("r2", "a", { start: 150, end: 400 }, { method: "create" });
    const early = aCall("r1", "a", { start: 100, end: 200 }, { method: "create" });
    expect(overlappingCalls([late, early])).toEqual([{ cluster: "a", first: early, second: late }]);
  });

  it("counts calls that touch in one millisecond, which the clock cannot order", () => {
    const first = aCall("r1", "a", { start: 100, end: 200 });
    const second = aCall("r2", "a", { start: 200, end: 300 });
    expect(overlappingCalls([first, second])).toEqual([{ cluster: "a", first, second }]);
  });

  it("finds a call nested inside a long one, past calls that ended before it", () => {
    const long = aCall("r1", "a", { start: 0, end: 1_000 });
    const short = aCall("r1", "a", { start: 10, end: 20 });
    const nested = aCall("r2", "a", { start: 500, end: 600 });
    expect(overlappingCalls([long, short, nested])).toEqual([{ cluster: "a", first: long, second: nested }]);
  });

  it("ignores overlaps within one replica, across clusters, and of calls about no cluster", () => {
    const journal = [
      aCall("r1", "a", { start: 100, end: 300 }),
      aCall("r1", "a", { start: 200, end: 400 }),
      aCall("r2", "b", { start: 100, end: 400 }),
      aCall("r2", null, { start: 100, end: 400 }, { method: "supportedVersions" }),
      aCall("r3", null, { start: 100, end: 400 }, { method: "supportedVersions" }),
    ];
    expect(overlappingCalls(journal)).toEqual([]);
  });

  it("reports calls of one replica against each other only when asked (one engine's own calls)", () => {
    const observing = aCall("r1", "a", { start: 100, end: 300, startSeq: 1, endSeq: 3 });
    const creating = aCall("r1", "a", { start: 200, end: 400, startSeq: 2, endSeq: 4 }, { method: "create" });
    expect(overlappingCalls([observing, creating])).toEqual([]);
    expect(overlappingCalls([observing, creating], { sameReplica: true })).toEqual([
      { cluster: "a", first: observing, second: creating },
    ]);
  });

  it("orders one process's own calls by its journal lines where their milliseconds tie", () => {
    const created = aCall("r1", "a", { start: 100, end: 116, startSeq: 1, endSeq: 2 }, { method: "create" });
    const thenObserved = aCall("r1", "a", { start: 116, end: 116, startSeq: 3, endSeq: 4 });
    expect(overlappingCalls([created, thenObserved], { sameReplica: true })).toEqual([]);

    const creating = aCall("r1", "a", { start: 116, end: 116, startSeq: 5, endSeq: 7 }, { method: "create" });
    const observedMeanwhile = aCall("r1", "a", { start: 116, end: 116, startSeq: 6, endSeq: 8 });
    expect(overlappingCalls([creating, observedMeanwhile], { sameReplica: true })).toEqual([
      { cluster: "a", first: creating, second: observedMeanwhile },
    ]);
  });

  it("compares a replica started again under its name (another process) with its former self by time", () => {
    const beforeRestart = aCall("r1", "a", { start: 100, end: 200, pid: 1, startSeq: 1, endSeq: 2 });
    const afterRestart = aCall("r1", "a", { start: 200, end: 300, pid: 2, startSeq: 1, endSeq: 2 });
    expect(overlappingCalls([beforeRestart, afterRestart], { sameReplica: true })).toHaveLength(1);
  });

  it("lets a call cut off by a kill last until the kill, not beyond", () => {
    const cutOff = aCall("r1", "a", { start: 100 }, { method: "create" });
    const duringIt = aCall("r2", "a", { start: 400, end: 450 });
    const afterTheKill = aCall("r2", "a", { start: 600, end: 700 });
    expect(overlappingCalls([cutOff, duringIt, afterTheKill], { killedAt: { r1: 500 } })).toEqual([
      { cluster: "a", first: cutOff, second: duringIt },
    ]);
  });

  it("ends each process of a replica started again under its name at its own end", () => {
    // r1's first process ended at 500 (lost its lease), its second was killed at 2,000.
    const cutOffFirst = aCall("r1", "a", { start: 100, pid: 1 });
    const cutOffSecond = aCall("r1", "b", { start: 1_500, pid: 2 });
    const otherOnA = aCall("r2", "a", { start: 1_000, end: 1_100 });
    const otherOnB = aCall("r2", "b", { start: 1_900, end: 1_950 });
    const endedAt = { "r1/1": 500, "r1/2": 2_000 };
    expect(overlappingCalls([cutOffFirst, cutOffSecond, otherOnA, otherOnB], { killedAt: endedAt })).toEqual([
      { cluster: "b", first: cutOffSecond, second: otherOnB },
    ]);
    // By name alone, the first process's call would last until the second's kill.
    expect(
      overlappingCalls([cutOffFirst, cutOffSecond, otherOnA, otherOnB], { killedAt: { r1: 2_000 } }),
    ).toHaveLength(2);
  });

  it("lets a call without an end and without a kill before it last for ever (it may still be running)", () => {
    const running = aCall("r1", "a", { start: 100 });
    const muchLater = aCall("r2", "a", { start: 1_000_000, end: 1_000_001 });
    expect(overlappingCalls([running, muchLater])).toHaveLength(1);
    // r1 was killed at 50, then started again under its name: this open call is the new process's.
    expect(overlappingCalls([running, muchLater], { killedAt: { r1: 50 } })).toHaveLength(1);
  });
});

describe("createsPerCluster", () => {
  it("counts the creates that returned, per cluster, and nothing else", () => {
    const journal = [
      aCall("r1", "a", { start: 1, end: 2 }, { method: "create" }),
      aCall("r2", "a", { start: 3, end: 4 }, { method: "create" }),
      aCall("r1", "b", { start: 1, end: 2 }, { method: "create", ok: false }),
      aCall("r1", "b", { start: 5 }, { method: "create" }), // cut off: it may or may not have made it
      aCall("r1", "b", { start: 6, end: 7 }, { method: "observe" }),
      aCall("r1", "c", { start: 1, end: 2 }, { method: "update" }),
    ];
    expect(createsPerCluster(journal)).toEqual(new Map([["a", 2]]));
  });
});

describe("handovers", () => {
  it("lists each change of the replica calling about a cluster, in the order the calls began", () => {
    const journal = [
      aCall("r2", "a", { start: 300, end: 310 }),
      aCall("r1", "a", { start: 100, end: 110 }),
      aCall("r1", "a", { start: 200, end: 210 }),
      aCall("r1", "a", { start: 400, end: 410 }),
      aCall("r3", "b", { start: 100, end: 110 }),
      aCall("r3", null, { start: 500, end: 510 }, { method: "supportedVersions" }),
    ];
    expect(handovers(journal)).toEqual([
      { cluster: "a", from: "r1", to: "r2", at: 300 },
      { cluster: "a", from: "r2", to: "r1", at: 400 },
    ]);
  });
});
