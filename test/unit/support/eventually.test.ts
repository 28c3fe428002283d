import { describe, expect, it } from "vitest";
import { eventually, NeverHappenedError, satisfying } from "../../support/eventually.js";

describe("satisfying", () => {
  it("returns the value when it holds", () => {
    expect(satisfying(3, (n) => n > 2)).toBe(3);
  });

  it("shows a Map's and a Set's entries when it does not hold, not `{}`", () => {
    const shares = new Map([
      ["engine-a", 5],
      ["engine-b", Number.NaN],
    ]);
    expect(() =>
      satisfying(shares, function split() {
        return false;
      }),
    ).toThrow(/split does not hold for:[\s\S]*"engine-a": 5[\s\S]*"engine-b": null/);
    expect(() => satisfying({ pods: new Set(["p1"]) }, () => false)).toThrow(/"pods": \[\s*"p1"\s*\]/);
  });
});

describe("eventually", () => {
  it("names what it waited for and the last failure", async () => {
    await expect(
      eventually(() => satisfying(new Map([["k", 1]]), () => false), {
        what: "the thing",
        timeoutMs: 20,
        intervalMs: 5,
      }),
    ).rejects.toThrow(NeverHappenedError);
    await expect(
      eventually(() => satisfying(new Map([["k", 1]]), () => false), {
        what: "the thing",
        timeoutMs: 20,
        intervalMs: 5,
      }),
    ).rejects.toThrow(
      /waited \d+ ms( \(20 ms at the machine's pace now, ×[\d.]+\))? for the thing; last failure: .*does not hold for:\n\{\n {2}"k": 1\n\}/,
    );
  });
});
