import { describe, expect, it } from "vitest";
import { lockHoldersApart, lockOf } from "../../support/machine-lock-sequencer.ts";

/** Files as `name:seconds`, `!` marking a holder of lock one, `?` one of lock two. */
const play = (files: string[], workers = 2) =>
  lockHoldersApart(files, {
    workers,
    durationOf: (file) => Number(file.split(":")[1]),
    lockOf: (file) => (file.startsWith("!") ? "one" : file.startsWith("?") ? "two" : undefined),
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

  it("names the lock of the heavy files that take one, and none for the others", () => {
    expect(lockOf("/repo/test/integration/capi-backend.heavy.test.ts")).toBe("capd");
    expect(lockOf("/repo/test/integration/kind-landscape.heavy.test.ts")).toBe("kind-nodes");
    expect(lockOf("/repo/test/integration/gardener-backend.heavy.test.ts")).toBeUndefined();
  });
});
