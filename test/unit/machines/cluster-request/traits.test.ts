/** Trait wishes: from Purpose resources and the annotation syntax, matched against a profile's traits, in words. */
import { describe, expect, it } from "vitest";
import {
  describeWish,
  formatWish,
  matchTraits,
  parseTraitList,
  type TraitWish,
  traitWish,
  wishKey,
} from "../../../../src/machines/cluster-request/traits.ts";

const WORKERLESS = "cluster.openmcp.cloud/workerless";
const NODELESS = "foo.bar.baz/nodeless";
const AWS = "infrastructure/vendor/aws";
const GCP = "infrastructure/vendor/gcp";

function wish(traits: string[], flags: { optional?: boolean; negated?: boolean } = {}): TraitWish {
  return { traits, optional: flags.optional ?? false, negated: flags.negated ?? false };
}

function parsed(text: string): readonly TraitWish[] {
  const result = parseTraitList(text);
  if ("problem" in result) throw new Error(`unexpected problem: ${result.problem}`);
  return result.wishes;
}

function problemOf(text: string): string {
  const result = parseTraitList(text);
  if (!("problem" in result)) throw new Error(`expected a problem for ${JSON.stringify(text)}`);
  return result.problem;
}

describe("traitWish", () => {
  it("turns a single trait into a required, positive wish", () => {
    expect(traitWish({ trait: WORKERLESS })).toEqual(wish([WORKERLESS]));
  });

  it("sorts and de-duplicates the equivalent traits of anyOf and keeps the flags", () => {
    expect(traitWish({ anyOf: [WORKERLESS, NODELESS, WORKERLESS], optional: true, negated: true })).toEqual(
      wish([WORKERLESS, NODELESS].sort(), { optional: true, negated: true }),
    );
  });

  it("refuses both trait and anyOf, and neither", () => {
    expect(traitWish({ trait: AWS, anyOf: [GCP] })).toEqual({
      problem: "exactly one of trait and anyOf must be set (both are)",
    });
    expect(traitWish({ optional: true })).toEqual({
      problem: "exactly one of trait and anyOf must be set (neither is)",
    });
  });

  it("refuses an empty anyOf and names an empty or malformed trait", () => {
    expect(traitWish({ anyOf: [] })).toEqual({ problem: "anyOf is empty; it must name at least one trait" });
    expect(traitWish({ trait: "" })).toEqual({
      problem: '"" is not a trait name (non-empty, no whitespace or , | ? !)',
    });
    expect(traitWish({ anyOf: [AWS, "a b"] })).toEqual({
      problem: '"a b" is not a trait name (non-empty, no whitespace or , | ? !)',
    });
  });
});

describe("wishKey", () => {
  it("is the traits joined by | and ignores optional and negated", () => {
    expect(wishKey(wish(["a", "b"]))).toBe("a|b");
    expect(wishKey(wish(["a", "b"], { optional: true, negated: true }))).toBe("a|b");
  });
});

describe("parseTraitList", () => {
  it("reads blank text as no wishes", () => {
    expect(parsed("")).toEqual([]);
    expect(parsed("  \t ")).toEqual([]);
  });

  it("reads required, optional, negated and any-of items, ignoring whitespace around items", () => {
    expect(parsed(` ${WORKERLESS} , ?${AWS}, !${GCP} ,?!a|c|b, !?d `)).toEqual([
      wish([WORKERLESS]),
      wish([AWS], { optional: true }),
      wish([GCP], { negated: true }),
      wish(["a", "b", "c"], { optional: true, negated: true }),
      wish(["d"], { optional: true, negated: true }),
    ]);
  });

  it("reads the design record's workerless/nodeless equivalence as one any-of wish", () => {
    expect(parsed(`${WORKERLESS}|${NODELESS}`)).toEqual([wish([WORKERLESS, NODELESS].sort())]);
  });

  it("names an empty item", () => {
    expect(problemOf("a,,b")).toBe('item 2 of "a,,b" is empty');
    expect(problemOf("a,")).toBe('item 2 of "a," is empty');
  });

  it("refuses doubled markers instead of guessing what !!x means", () => {
    expect(problemOf("a, !!x")).toBe('"!!x": each of the markers ? and ! may appear once');
    expect(problemOf("?!?x")).toBe('"?!?x": each of the markers ? and ! may appear once');
  });

  it("names the item with a malformed trait", () => {
    expect(problemOf("a, ?")).toBe('"?": "" is not a trait name (non-empty, no whitespace or , | ? !)');
    expect(problemOf("a|")).toBe('"a|": "" is not a trait name (non-empty, no whitespace or , | ? !)');
    expect(problemOf("a | b")).toBe(
      '"a | b": "a " is not a trait name (non-empty, no whitespace or , | ? !)',
    );
    expect(problemOf("x?y")).toBe('"x?y": "x?y" is not a trait name (non-empty, no whitespace or , | ? !)');
    expect(problemOf("? x")).toBe('"? x": " x" is not a trait name (non-empty, no whitespace or , | ? !)');
  });
});

describe("formatWish", () => {
  it("writes markers ? then ! and the traits joined by |", () => {
    expect(formatWish(wish(["a"]))).toBe("a");
    expect(formatWish(wish(["a", "b"], { optional: true, negated: true }))).toBe("?!a|b");
    expect(parsed(formatWish(wish(["a", "b"], { negated: true })))).toEqual([
      wish(["a", "b"], { negated: true }),
    ]);
  });
});

describe("matchTraits", () => {
  const profile = [WORKERLESS, AWS];

  it("admits a profile meeting every required wish and counts the optional ones that hold", () => {
    const wishes = parsed(`${WORKERLESS}|${NODELESS}, !${GCP}, ?${AWS}, ?foo`);
    expect(matchTraits(wishes, profile)).toEqual({ admissible: true, missing: [], preferred: 1 });
  });

  it("lists the required wishes that do not hold, in the order of the wishes", () => {
    const wishes = parsed(`!${AWS}, ?${GCP}, ${NODELESS}`);
    expect(matchTraits(wishes, profile)).toEqual({
      admissible: false,
      missing: [wish([AWS], { negated: true }), wish([NODELESS])],
      preferred: 0,
    });
  });

  it("counts an optional negated wish as preferred when the trait is absent", () => {
    expect(matchTraits(parsed(`?!${GCP}`), profile)).toEqual({ admissible: true, missing: [], preferred: 1 });
  });

  it("admits anything when there are no wishes", () => {
    expect(matchTraits([], [])).toEqual({ admissible: true, missing: [], preferred: 0 });
  });
});

describe("describeWish", () => {
  it("names single, negated, any-of and negated any-of wishes", () => {
    expect(describeWish(wish([WORKERLESS]))).toBe(WORKERLESS);
    expect(describeWish(wish([GCP], { negated: true }))).toBe(`not ${GCP}`);
    expect(describeWish(wish(["a", "b"]))).toBe("any of a, b");
    expect(describeWish(wish(["a", "b"], { negated: true }))).toBe("none of a, b");
  });
});
