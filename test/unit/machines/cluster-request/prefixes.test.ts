/** Prefixes on shared Clusters: collisions, validity, and which prefix a request is granted. */
import { describe, expect, it } from "vitest";
import {
  grantPrefix,
  MAX_PREFIX_LENGTH,
  MIN_PREFIX_LENGTH,
  prefixesCollide,
  validPrefix,
} from "../../../../src/machines/cluster-request/prefixes.ts";

const GENERATED = /^p[a-z2-7]{7}-$/;

describe("prefixesCollide", () => {
  it("holds when one is a prefix of the other, either way round, and for equal ones", () => {
    expect(prefixesCollide("foo-", "foo-bar-")).toBe(true);
    expect(prefixesCollide("foo-bar-", "foo-")).toBe(true);
    expect(prefixesCollide("foo-", "foo-")).toBe(true);
    expect(prefixesCollide("foo-", "fob-")).toBe(false);
    expect(prefixesCollide("foo-a", "foo-b")).toBe(false);
  });
});

describe("validPrefix", () => {
  it("takes lowercase letters, digits and - within the length bounds, not starting with -", () => {
    expect(validPrefix("foo-")).toBe(true);
    expect(validPrefix("a1-b2")).toBe(true);
    expect(validPrefix("x".repeat(MIN_PREFIX_LENGTH))).toBe(true);
    expect(validPrefix("x".repeat(MAX_PREFIX_LENGTH))).toBe(true);
  });

  it("refuses short, long, uppercase, leading - and other characters", () => {
    expect(validPrefix("x".repeat(MIN_PREFIX_LENGTH - 1))).toBe(false);
    expect(validPrefix("x".repeat(MAX_PREFIX_LENGTH + 1))).toBe(false);
    expect(validPrefix("Foo-")).toBe(false);
    expect(validPrefix("-foo")).toBe(false);
    expect(validPrefix("foo_")).toBe(false);
    expect(validPrefix("")).toBe(false);
  });
});

describe("grantPrefix", () => {
  it("grants the proposal when it is valid and collides with no taken prefix", () => {
    expect(grantPrefix({ proposed: "foo-", taken: ["bar-", "fo1-"], seed: "uid-1" })).toBe("foo-");
  });

  it("ignores the empty prefixes of dedicated Clusters", () => {
    expect(grantPrefix({ proposed: "foo-", taken: [""], seed: "uid-1" })).toBe("foo-");
  });

  it("generates a prefix when none is proposed, the proposal is invalid or too short, or it collides", () => {
    for (const input of [
      { proposed: undefined, taken: [] },
      { proposed: "Bad_Prefix", taken: [] },
      { proposed: "ab", taken: [] },
      { proposed: "foo-", taken: ["foo-"] },
      { proposed: "foo-", taken: ["foo-bar-"] },
      { proposed: "foo-bar-", taken: ["foo-"] },
    ]) {
      const granted = grantPrefix({ ...input, seed: "uid-1" });
      expect(granted, JSON.stringify(input)).toMatch(GENERATED);
      expect(validPrefix(granted)).toBe(true);
    }
  });

  it("derives the generated prefix from the seed alone, and it differs between seeds", () => {
    const first = grantPrefix({ proposed: undefined, taken: [], seed: "uid-1" });
    expect(grantPrefix({ proposed: "Bad", taken: ["zzz-"], seed: "uid-1" })).toBe(first);
    expect(grantPrefix({ proposed: undefined, taken: [], seed: "uid-2" })).not.toBe(first);
  });

  it("tries the next attempt when the generated prefix is taken", () => {
    const first = grantPrefix({ proposed: undefined, taken: [], seed: "uid-1" });
    const second = grantPrefix({ proposed: undefined, taken: [first], seed: "uid-1" });
    expect(second).toMatch(GENERATED);
    expect(prefixesCollide(first, second)).toBe(false);
  });

  it("still finds a free prefix when a hand-written taken prefix blocks every p…", () => {
    const granted = grantPrefix({ proposed: undefined, taken: ["p"], seed: "uid-1" });
    expect(granted).toMatch(/^a[a-z2-7]{7}-$/);
  });

  it("terminates with a valid prefix even when taken prefixes block every generated one", () => {
    const everyLead = [..."abcdefghijklmnopqrstuvwxyz0123456789"];
    const granted = grantPrefix({ proposed: undefined, taken: everyLead, seed: "uid-1" });
    expect(granted).toBe(grantPrefix({ proposed: undefined, taken: [], seed: "uid-1" }));
    expect(validPrefix(granted)).toBe(true);
  });
});
