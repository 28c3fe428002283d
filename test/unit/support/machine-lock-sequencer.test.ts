import { describe, expect, it } from "vitest";
import { lockHoldersApart } from "../../support/machine-lock-sequencer.ts";
import { locksOf } from "../../support/machine-locks.ts";

/** Files as `name:seconds`, `!` marking a holder of lock one, `?` one of lock two. */
const play = (files: string[], workers = 2) =>
  lockHoldersApart(files, {
    workers,
    durationOf: (file) => Number(file.split(":")[1]),
    locksOf: (file) => [...(file.startsWith("!") ? ["one"] : []), ...(file.startsWith("?") ? ["two"] : [])],
  });

describe("lockHoldersApart", () => {
  it("keeps the order when no lock holder would wait", () => {
    const files = ["!a:300", "b:280", "c:200", "!d:150", "e:50"];
    expect(play(files)).toEqual(files);
  });

  it("starts the next file that would not wait instead of a second lock holder beside the first", () => {
    // Slowest first would pair !a and !b: one worker idle for 300 s.
    expect(play(["!a:300", "!b:250", "c:200", "d:150", "e:50"])).toEqual([
      "!a:300",
      "c:200",
      "d:150", // at 200, !a still runs until 300
      "!b:250", // at 300: !a is done
      "e:50",
    ]);
  });

  it("keeps a lock holder's place when every file left would wait", () => {
    expect(play(["!a:300", "!b:250"])).toEqual(["!a:300", "!b:250"]);
  });

  it("plays one worker as the given order", () => {
    const files = ["!a:300", "!b:250", "c:200"];
    expect(play(files, 1)).toEqual(files);
  });

  it("keeps each lock's holders apart and lets holders of different locks run side by side", () => {
    expect(play(["!a:300", "!c:200", "?b:280", "?d:150", "e:50"])).toEqual([
      "!a:300",
      "?b:280", // at 0, !c would wait for !a
      "?d:150", // at 280, ?b is done; !c would still wait until 300
      "!c:200", // at 300
      "e:50",
    ]);
  });

  it("waits for every lock a file takes", () => {
    // Files as `name:seconds`; `!?` takes both locks.
    const both = lockHoldersApart(["!a:300", "?b:100", "!?c:100", "d:50"], {
      workers: 2,
      durationOf: (file) => Number(file.split(":")[1]),
      locksOf: (file) => [...(file.includes("!") ? ["one"] : []), ...(file.includes("?") ? ["two"] : [])],
    });
    // At 100 (?b done), !?c would wait for !a until 300: d goes first.
    expect(both).toEqual(["!a:300", "?b:100", "d:50", "!?c:100"]);
  });

  it("starts a lock's chain of holders first and keeps it going: together they bound the run", () => {
    // Slowest first would start b and c; the three holders of lock one (300 s in all) would then end at 450.
    expect(play(["b:200", "c:150", "!a:100", "!d:100", "!e:100", "f:50"])).toEqual([
      "!a:100",
      "b:200",
      "!d:100", // at 100, the chain's next holder, not c
      "c:150", // at 200, both workers free: c, now longer than what is left of the chain
      "!e:100", // the chain ends at 300
      "f:50",
    ]);
  });

  it("lets as many holders of a lock run side by side as it has slots, and counts its chain spread over them", () => {
    // Lock one has two slots: !a and !b together; !c waits for the first of them, so e and f go first.
    const files = ["!a:300", "!b:200", "!c:200", "e:150", "f:100"];
    const order = lockHoldersApart(files, {
      workers: 3,
      durationOf: (file) => Number(file.split(":")[1]),
      locksOf: (file) => (file.startsWith("!") ? ["one"] : []),
      slotsOf: () => 2,
    });
    expect(order).toEqual([
      "!a:300",
      "!b:200",
      "e:150", // at 0: !c would wait for a slot until 200
      "f:100", // at 150: still no slot
      "!c:200", // at 200: !b's slot
    ]);
    // With one slot, !b waits for !a: e and f go beside it.
    expect(play(files, 3)).toEqual(["!a:300", "e:150", "f:100", "!b:200", "!c:200"]);
  });

  it("names the locks of the heavy files that take some, and none for the others", () => {
    expect(locksOf("/repo/test/integration/capi-backend.heavy.test.ts")).toEqual([
      "capd",
      "kind-nodes",
      "docker-nodes",
    ]);
    expect(locksOf("/repo/test/integration/kind-landscape.heavy.test.ts")).toEqual([
      "kind-nodes",
      "docker-nodes",
    ]);
    expect(locksOf("/repo/test/integration/kind-pool.heavy.test.ts")).toEqual(["kind-nodes", "docker-nodes"]);
    expect(locksOf("/repo/test/integration/kind-clusters.heavy.test.ts")).toEqual(["docker-nodes"]);
    expect(locksOf("/repo/test/integration/gardener-backend.heavy.test.ts")).toEqual([]);
  });
});
