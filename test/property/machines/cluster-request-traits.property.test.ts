/** Laws of trait wishes, purpose aggregation and prefix grants over random inputs (the oracles are written out here). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PurposeSpec, TraitRequest } from "../../../src/api/purpose.ts";
import { grantPrefix, validPrefix } from "../../../src/machines/cluster-request/prefixes.ts";
import { chooseProfile } from "../../../src/machines/cluster-request/profile-choice.ts";
import {
  aggregateWishes,
  type SchedulingWishes,
} from "../../../src/machines/cluster-request/purpose-aggregation.ts";
import {
  formatWish,
  holds,
  matchTraits,
  parseTraitList,
  type TraitWish,
  traitWish,
  wishKey,
} from "../../../src/machines/cluster-request/traits.ts";

/** For the properties that count their branches (> 10 each): at 100 runs some counts were about 10 now and then. */
const RUNS_FOR_COUNTERS = { numRuns: 400 };

// ---- traits ----------------------------------------------------------------------------------------

/** A small pool, so wishes and offered traits overlap often, plus a few realistic names. */
const traitName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("a", "b", "c", "d", "cluster.openmcp.cloud/workerless") },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9./-]{0,12}$/) },
);

const normalised = (names: readonly string[]) => [...new Set(names)].sort();

const wish: fc.Arbitrary<TraitWish> = fc.record({
  traits: fc.uniqueArray(traitName, { minLength: 1, maxLength: 3 }).map(normalised),
  optional: fc.boolean(),
  negated: fc.boolean(),
});

const offered = fc.array(traitName, { maxLength: 6 });

/** The definition of a wish holding, written out: some of its traits offered, or (negated) none. */
function oracleHolds(w: TraitWish, traits: readonly string[]): boolean {
  const present = w.traits.some((trait) => traits.includes(trait));
  return w.negated ? !present : present;
}

/** `missing` as a multiset, so two matches can be compared whatever the order of the wishes. */
const missingKeys = (wishes: readonly TraitWish[]) => wishes.map(formatWish).sort();

describe("trait wishes", () => {
  it("hold exactly as defined, and matchTraits follows: missing = required ones not holding, preferred = optional ones holding", () => {
    fc.assert(
      fc.property(fc.array(wish, { maxLength: 6 }), offered, (wishes, traits) => {
        const match = matchTraits(wishes, traits);
        const missing = wishes.filter((w) => !w.optional && !oracleHolds(w, traits));
        expect(match.missing).toEqual(missing);
        expect(match.admissible).toBe(missing.length === 0);
        expect(match.preferred).toBe(wishes.filter((w) => w.optional && oracleHolds(w, traits)).length);
        for (const w of wishes) expect(holds(w, new Set(traits))).toBe(oracleHolds(w, traits));
      }),
    );
  });

  it("negation flips whether a wish holds", () => {
    fc.assert(
      fc.property(wish, offered, (w, traits) => {
        const set = new Set(traits);
        expect(holds({ ...w, negated: !w.negated }, set)).toBe(!holds(w, set));
        const required = { ...w, optional: false };
        expect(matchTraits([{ ...required, negated: !w.negated }], traits).admissible).toBe(
          !matchTraits([required], traits).admissible,
        );
      }),
    );
  });

  it("any-of is the union of its traits (and a negated any-of their intersection of absences)", () => {
    fc.assert(
      fc.property(wish, offered, (w, traits) => {
        const set = new Set(traits);
        const single = (trait: string) => ({ traits: [trait], optional: false, negated: false });
        const anyHolds = w.traits.some((trait) => holds(single(trait), set));
        expect(holds({ ...w, negated: false }, set)).toBe(anyHolds);
        expect(holds({ ...w, negated: true }, set)).toBe(!anyHolds);
      }),
    );
  });

  it("optional wishes never exclude: adding them never changes admissible or missing", () => {
    fc.assert(
      fc.property(
        fc.array(wish, { maxLength: 5 }),
        fc.array(wish, { maxLength: 5 }),
        offered,
        fc.func(fc.integer()),
        (wishes, extra, traits, rank) => {
          const optionals = extra.map((w) => ({ ...w, optional: true }));
          // Interleave the optional wishes anywhere among the others.
          const mixed = [...wishes, ...optionals]
            .map((w, index) => ({ w, at: rank(index) }))
            .sort((x, y) => x.at - y.at)
            .map(({ w }) => w);
          const before = matchTraits(wishes, traits);
          const after = matchTraits(mixed, traits);
          expect(after.admissible).toBe(before.admissible);
          expect(missingKeys(after.missing)).toEqual(missingKeys(before.missing));
          expect(after.preferred).toBeGreaterThanOrEqual(before.preferred);
        },
      ),
    );
  });

  it("the order of the wishes and of the offered traits (and repeats among them) never changes the result", () => {
    fc.assert(
      fc.property(
        fc
          .array(wish, { maxLength: 6 })
          .chain((wishes) =>
            fc.tuple(fc.constant(wishes), fc.shuffledSubarray(wishes, { minLength: wishes.length })),
          ),
        offered.chain((traits) =>
          fc.tuple(fc.constant(traits), fc.shuffledSubarray(traits, { minLength: traits.length })),
        ),
        ([wishes, reordered], [traits, shuffled]) => {
          const a = matchTraits(wishes, traits);
          const b = matchTraits(reordered, [...shuffled, ...shuffled]);
          expect(b.admissible).toBe(a.admissible);
          expect(b.preferred).toBe(a.preferred);
          expect(missingKeys(b.missing)).toEqual(missingKeys(a.missing));
        },
      ),
    );
  });

  it("parse ∘ format round-trips, whatever whitespace surrounds the items", () => {
    const blank = fc.constantFrom("", " ", "  ", "\t");
    fc.assert(
      fc.property(fc.array(fc.tuple(blank, wish, blank), { maxLength: 6 }), (items) => {
        const text = items.map(([before, w, after]) => `${before}${formatWish(w)}${after}`).join(",");
        expect(parseTraitList(text)).toEqual({ wishes: items.map(([, w]) => w) });
      }),
    );
  });

  it("parsing any text either names a problem or gives normalised wishes that format back to the same wishes", () => {
    const piece = fc.constantFrom("a", "b", "c", "?", "!", "|", ",", " ", "x.y/z", "-");
    const reached = { problem: 0, wishes: 0 };
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const result = parseTraitList(pieces.join(""));
        if ("problem" in result) {
          reached.problem++;
          expect(result.problem).not.toBe("");
          return;
        }
        if (result.wishes.length > 0) reached.wishes++;
        for (const w of result.wishes) {
          expect(w.traits.length).toBeGreaterThan(0);
          expect(w.traits).toEqual(normalised(w.traits));
          for (const trait of w.traits) expect(trait).toMatch(/^[^\s,|?!]+$/);
        }
        expect(parseTraitList(result.wishes.map(formatWish).join(","))).toEqual(result);
      }),
      RUNS_FOR_COUNTERS,
    );
    // Both kinds of answer were checked, many times.
    expect(reached.problem).toBeGreaterThan(10);
    expect(reached.wishes).toBeGreaterThan(10);
  });

  it("traitWish normalises: the same set of traits, sorted and unique, and the flags as given", () => {
    fc.assert(
      fc.property(
        fc.array(traitName, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.boolean(),
        (names, o, n) => {
          expect(traitWish({ anyOf: names, optional: o, negated: n })).toEqual({
            traits: normalised(names),
            optional: o,
            negated: n,
          });
        },
      ),
    );
  });
});

describe("choosing a profile for a new Cluster", () => {
  const profileName = fc.constantFrom("template", "p-a", "p-b", "p-c");
  const known = fc
    .array(fc.tuple(profileName, fc.array(traitName, { maxLength: 4 })), { maxLength: 4 })
    .map((entries) => new Map(entries));

  it("takes a profile meeting every required wish and the most optional ones, the template's on a tie, then by name", () => {
    const reached = { noneFits: 0, chosen: 0 };
    fc.assert(
      fc.property(fc.array(wish, { minLength: 1, maxLength: 4 }), known, (wishes, profiles) => {
        const score = (traits: readonly string[]) => ({
          admissible: wishes.every((w) => w.optional || oracleHolds(w, traits)),
          preferred: wishes.filter((w) => w.optional && oracleHolds(w, traits)).length,
        });
        // The template's profile is always a candidate; not known yet, it offers nothing known.
        const candidates = new Map(profiles);
        if (!candidates.has("template")) candidates.set("template", []);
        const admissible = [...candidates]
          .map(([name, traits]) => ({ name, ...score(traits) }))
          .filter((p) => p.admissible);
        const choice = chooseProfile("template", wishes, profiles);
        if (admissible.length === 0) {
          reached.noneFits++;
          expect(choice).toHaveProperty("missing");
          return;
        }
        reached.chosen++;
        const best = Math.max(...admissible.map((p) => p.preferred));
        const winners = admissible.filter((p) => p.preferred === best).map((p) => p.name);
        const expected = winners.includes("template") ? "template" : [...winners].sort()[0];
        expect(choice).toEqual({ profile: expected });
      }),
      RUNS_FOR_COUNTERS,
    );
    expect(reached.noneFits).toBeGreaterThan(10);
    expect(reached.chosen).toBeGreaterThan(10);
  });

  it("when none fits, names the required wishes the template's profile misses (offering nothing when it is unknown)", () => {
    let noneFits = 0;
    fc.assert(
      fc.property(fc.array(wish, { minLength: 1, maxLength: 4 }), known, (wishes, profiles) => {
        const choice = chooseProfile("template", wishes, profiles);
        if (!("missing" in choice)) return;
        noneFits++;
        const template = profiles.get("template") ?? [];
        const expected = wishes.filter((w) => !w.optional && !oracleHolds(w, template));
        expect(choice.missing).toEqual(expected);
        for (const w of expected) expect(choice.message).toContain(w.traits[0]);
      }),
      RUNS_FOR_COUNTERS,
    );
    expect(noneFits).toBeGreaterThan(10);
  });
});

// ---- purpose aggregation ----------------------------------------------------------------------------

const traitRequest: fc.Arbitrary<TraitRequest> = fc
  .record(
    {
      names: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 2 }),
      single: fc.boolean(),
      optional: fc.option(fc.boolean(), { nil: undefined }),
      negated: fc.option(fc.boolean(), { nil: undefined }),
    },
    { requiredKeys: ["names", "single"] },
  )
  .map(({ names, single, ...flags }) =>
    single ? { trait: names[0] as string, ...flags } : { anyOf: names, ...flags },
  );

const purpose: fc.Arbitrary<PurposeSpec> = fc.record(
  { dedicated: fc.boolean(), traits: fc.array(traitRequest, { maxLength: 4 }) },
  { requiredKeys: [] },
);

const ownWishes = fc.record(
  {
    dedicated: fc.boolean(),
    traits: fc.array(
      fc.record({
        traits: fc
          .uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 2 })
          .map(normalised),
        optional: fc.boolean(),
        negated: fc.boolean(),
      }),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: [] },
);

/** A purpose's trait request as the oracle sees it: its key and flags, computed without the code under test. */
function requested(request: TraitRequest) {
  const names = request.trait !== undefined ? [request.trait] : [...(request.anyOf ?? [])];
  return {
    key: normalised(names).join("|"),
    optional: request.optional === true,
    negated: request.negated === true,
  };
}

function aggregated(
  purposes: readonly PurposeSpec[],
  own: Parameters<typeof aggregateWishes>[1],
): SchedulingWishes {
  const result = aggregateWishes(purposes, own);
  if ("problem" in result) throw new Error(`unexpected problem: ${result.problem}`);
  return result;
}

describe("aggregating purposes and the request's own wishes", () => {
  it("keeps each key once, loses none and invents none", () => {
    fc.assert(
      fc.property(fc.array(purpose, { maxLength: 4 }), ownWishes, (purposes, own) => {
        const keys = aggregated(purposes, own).traits.map(wishKey);
        expect(new Set(keys).size).toBe(keys.length);
        const sources = [
          ...(own.traits ?? []).map(wishKey),
          ...purposes.flatMap((p) => (p.traits ?? []).map((t) => requested(t).key)),
        ];
        expect([...keys].sort()).toEqual([...new Set(sources)].sort());
      }),
    );
  });

  it("is idempotent: aggregating the result again, with no purposes, gives the same wishes", () => {
    fc.assert(
      fc.property(fc.array(purpose, { maxLength: 4 }), ownWishes, (purposes, own) => {
        const once = aggregated(purposes, own);
        const twice = aggregated([], {
          traits: once.traits,
          ...(once.dedicated === undefined ? {} : { dedicated: once.dedicated }),
        });
        expect(twice).toEqual(once);
      }),
    );
  });

  it("makes a wish optional only if it is optional everywhere it appears", () => {
    fc.assert(
      fc.property(fc.array(purpose, { maxLength: 4 }), ownWishes, (purposes, own) => {
        const occurrences = [
          ...(own.traits ?? []).map((w) => ({ key: wishKey(w), optional: w.optional })),
          ...purposes.flatMap((p) => (p.traits ?? []).map(requested)),
        ];
        for (const w of aggregated(purposes, own).traits) {
          const everywhere = occurrences.filter((o) => o.key === wishKey(w)).every((o) => o.optional);
          expect(w.optional).toBe(everywhere);
        }
      }),
    );
  });

  it("takes negated from the request's own wish when there is one, else from the first purpose naming it", () => {
    fc.assert(
      fc.property(fc.array(purpose, { maxLength: 4 }), ownWishes, (purposes, own) => {
        const result = aggregated(purposes, own);
        for (const w of result.traits) {
          const mine = (own.traits ?? []).find((o) => wishKey(o) === wishKey(w));
          const first = purposes
            .flatMap((p) => (p.traits ?? []).map(requested))
            .find((o) => o.key === wishKey(w));
          expect(w.negated).toBe(mine ? mine.negated : first?.negated);
        }
      }),
    );
  });

  it("decides dedicated as the record says: own value, else any true, else any false, else undefined", () => {
    fc.assert(
      fc.property(fc.array(purpose, { maxLength: 4 }), ownWishes, (purposes, own) => {
        const said = purposes.map((p) => p.dedicated);
        const expected =
          own.dedicated ?? (said.includes(true) ? true : said.includes(false) ? false : undefined);
        expect(aggregated(purposes, own).dedicated).toBe(expected);
      }),
    );
  });

  it("names the first purpose whose trait cannot be read", () => {
    const broken = fc.constantFrom<TraitRequest>(
      {},
      { anyOf: [] },
      { trait: "" },
      { trait: "a", anyOf: ["b"] },
    );
    fc.assert(
      fc.property(
        fc.array(purpose, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.nat(),
        broken,
        (purposes, p, t, bad) => {
          const at = p % purposes.length;
          const target = purposes[at] as PurposeSpec;
          const traits = [...(target.traits ?? [])];
          traits.splice(t % (traits.length + 1), 0, bad);
          const withBad = purposes.map((spec, index) => (index === at ? { ...spec, traits } : spec));
          const result = aggregateWishes(withBad, {});
          expect(result).toHaveProperty("problem");
          expect((result as { problem: string }).problem).toMatch(
            new RegExp(`^purpose ${at + 1}, traits\\[`),
          );
        },
      ),
    );
  });
});

// ---- prefixes --------------------------------------------------------------------------------------

const validPrefixText = fc.stringMatching(/^[a-z0-9][a-z0-9-]{2,19}$/);

/**
 * Taken prefixes: valid ones, "" of dedicated Clusters, hand-written short ones, and pieces and extensions of
 * the proposal and of what the seed would generate (so collisions both ways round are common).
 */
/** Made once: a `stringMatching` arbitrary made anew inside each `chain` cost ~0.2 s a run (400 runs timed out at 60 s). */
const SHORT_TAIL = fc.stringMatching(/^[a-z0-9-]{0,4}$/);
const SHORT_GENERATED = fc.stringMatching(/^p[a-z2-7]{0,2}$/);

function takenFor(seed: string, proposed: string | undefined): fc.Arbitrary<string[]> {
  const generated = grantPrefix({ proposed: undefined, taken: [], seed });
  const near = (prefix: string) =>
    fc.oneof(
      fc.integer({ min: 1, max: prefix.length }).map((length) => prefix.slice(0, length)),
      SHORT_TAIL.map((tail) => `${prefix}${tail}`),
    );
  return fc.array(
    fc.oneof(
      validPrefixText,
      fc.constant(""),
      SHORT_GENERATED,
      near(generated),
      ...(proposed ? [near(proposed)] : []),
    ),
    { maxLength: 12 },
  );
}

const prefixInput = fc
  .tuple(
    fc.stringMatching(/^[0-9a-f-]{1,36}$/),
    fc.option(fc.oneof(validPrefixText, fc.string({ maxLength: 6 })), { nil: undefined }),
  )
  .chain(([seed, proposed]) =>
    fc.record({ seed: fc.constant(seed), proposed: fc.constant(proposed), taken: takenFor(seed, proposed) }),
  );

/** Collision written out: one starts with the other. */
const collide = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

describe("granting prefixes", () => {
  it("grants a valid prefix that collides with no taken one, the same for the same input in any order", () => {
    let compared = 0;
    fc.assert(
      fc.property(prefixInput, fc.func(fc.integer()), (input, rank) => {
        const granted = grantPrefix(input);
        expect(validPrefix(granted)).toBe(true);
        for (const other of input.taken) {
          if (other === "") continue;
          compared++;
          expect(collide(granted, other), other).toBe(false);
        }
        expect(grantPrefix({ ...input, taken: [...input.taken] })).toBe(granted);
        const reordered = [...input.taken].sort((a, b) => rank(a) - rank(b));
        expect(grantPrefix({ ...input, taken: reordered })).toBe(granted);
      }),
      RUNS_FOR_COUNTERS,
    );
    expect(compared).toBeGreaterThan(10);
  });

  it("returns a valid proposal unchanged when it collides with no taken prefix", () => {
    fc.assert(
      fc.property(
        validPrefixText,
        fc.array(fc.oneof(validPrefixText, fc.constant("")), { maxLength: 8 }),
        fc.string(),
        (proposed, taken, seed) => {
          fc.pre(taken.every((other) => other === "" || !collide(proposed, other)));
          expect(grantPrefix({ proposed, taken, seed })).toBe(proposed);
        },
      ),
    );
  });

  it("never grants colliding prefixes to requests sharing one Cluster, whatever they propose", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.option(fc.oneof(validPrefixText, fc.constantFrom("team-", "team-a-", "tea", "ab")), {
            nil: undefined,
          }),
          {
            maxLength: 12,
          },
        ),
        (proposals) => {
          const granted: string[] = [];
          for (const [index, proposed] of proposals.entries()) {
            granted.push(grantPrefix({ proposed, taken: granted, seed: `uid-${index}` }));
          }
          for (const [i, a] of granted.entries()) {
            for (const b of granted.slice(i + 1)) expect(collide(a, b), `${a} vs ${b}`).toBe(false);
          }
        },
      ),
    );
  });
});
