/** Trait wishes: from Purpose resources and the annotation syntax, matched against a profile's traits, in words; and the profile a new Cluster gets. */
import { describe, expect, it } from "vitest";
import { chooseProfile } from "../../../../src/machines/cluster-request/profile-choice.ts";
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
    const [preferred] = parsed(`?${WORKERLESS}|${NODELESS}`);
    expect(preferred).toEqual(wish([WORKERLESS, NODELESS], { optional: true }));
    expect(describeWish(preferred as TraitWish)).toBe(`any of ${WORKERLESS}, ${NODELESS}`);
    // Either trait meets it; a profile with neither is still admissible, only ranked lower.
    expect(matchTraits(parsed(`?${WORKERLESS}|${NODELESS}`), [NODELESS]).preferred).toBe(1);
    expect(matchTraits(parsed(`?${WORKERLESS}|${NODELESS}`), [AWS])).toEqual({
      admissible: true,
      missing: [],
      preferred: 0,
    });
  });

  it("reads a negated trait as a required wish that the cluster must not have", () => {
    expect(parsed(`!${GCP}`)).toEqual([wish([GCP], { negated: true })]);
  });

  it("reads the markers in either order: !?x is ?!x", () => {
    expect(parsed("!?x")).toEqual([wish(["x"], { optional: true, negated: true })]);
    expect(parsed("!?x")).toEqual(parsed("?!x"));
  });

  it("names the offending item of a bad list: a blank item, a space inside a name, a dangling |", () => {
    expect(problemOf("a,,b")).toContain("item 2");
    expect(problemOf("a b")).toBe('"a b": "a b" is not a trait name (non-empty, no whitespace or , | ? !)');
    expect(problemOf("x, |a")).toBe('"|a": "" is not a trait name (non-empty, no whitespace or , | ? !)');
    expect(problemOf(" , a")).toBe('item 1 of " , a" is empty');
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

describe("chooseProfile", () => {
  const TEMPLATE = "test.engine-test.small";
  const profiles = (entries: Record<string, string[]>) => new Map(Object.entries(entries));

  it("takes the template's profile when there are no wishes, even if no such profile is known", () => {
    expect(chooseProfile(TEMPLATE, [], new Map())).toEqual({ profile: TEMPLATE });
    expect(chooseProfile(TEMPLATE, [], profiles({ other: [WORKERLESS] }))).toEqual({ profile: TEMPLATE });
  });

  it("lets optional wishes only rank: the template's profile stays when it is not known yet or none meets them", () => {
    const optional = parsed("?example.com/foo");
    expect(chooseProfile(TEMPLATE, optional, new Map())).toEqual({ profile: TEMPLATE });
    expect(chooseProfile(TEMPLATE, optional, profiles({ other: [WORKERLESS] }))).toEqual({
      profile: TEMPLATE,
    });
    expect(chooseProfile(TEMPLATE, optional, profiles({ other: ["example.com/foo"] }))).toEqual({
      profile: "other",
    });
  });

  it("keeps the template's profile when it meets every required wish", () => {
    const known = profiles({ [TEMPLATE]: [WORKERLESS], "a-other": [WORKERLESS] });
    expect(chooseProfile(TEMPLATE, parsed(WORKERLESS), known)).toEqual({ profile: TEMPLATE });
  });

  it("takes another profile when the template's lacks a required trait", () => {
    const known = profiles({ [TEMPLATE]: [AWS], workerless: [WORKERLESS, AWS] });
    expect(chooseProfile(TEMPLATE, parsed(`${WORKERLESS}, !${GCP}`), known)).toEqual({
      profile: "workerless",
    });
  });

  it("takes the admissible profile meeting the most optional wishes, the template's only on a tie", () => {
    const known = profiles({
      [TEMPLATE]: [WORKERLESS],
      "one-extra": [WORKERLESS, AWS],
      "two-extras": [WORKERLESS, AWS, NODELESS],
      "not-admissible": [AWS, NODELESS, "x"],
    });
    expect(chooseProfile(TEMPLATE, parsed(`${WORKERLESS}, ?${AWS}, ?${NODELESS}, ?x`), known)).toEqual({
      profile: "two-extras",
    });
    expect(chooseProfile(TEMPLATE, parsed(`${WORKERLESS}, ?${GCP}`), known)).toEqual({ profile: TEMPLATE });
  });

  it("breaks a tie between other profiles by name", () => {
    const known = profiles({ [TEMPLATE]: [], zeta: [WORKERLESS], alpha: [WORKERLESS] });
    expect(chooseProfile(TEMPLATE, parsed(WORKERLESS), known)).toEqual({ profile: "alpha" });
  });

  it("names the required trait no profile offers, and says the template's profile lacks it", () => {
    const known = profiles({ [TEMPLATE]: [AWS], other: [GCP] });
    const choice = chooseProfile(TEMPLATE, parsed(`${WORKERLESS}, ?${AWS}`), known);
    expect(choice).toEqual({
      missing: [wish([WORKERLESS])],
      message: `no ClusterProfile offers the required traits: ${WORKERLESS} (profile ${TEMPLATE} of the purpose's template lacks them, and no other profile has them all)`,
    });
  });

  it("names what the template's profile, not known yet (offering nothing known), misses when no profile fits", () => {
    const choice = chooseProfile(TEMPLATE, parsed(`${WORKERLESS}, ${GCP}, ?x`), profiles({ gcp: [GCP] }));
    expect(choice).toEqual({
      missing: [wish([WORKERLESS]), wish([GCP])],
      message: `no ClusterProfile offers the required traits: ${WORKERLESS}, ${GCP} (profile ${TEMPLATE} of the purpose's template is not known yet)`,
    });
  });
});
