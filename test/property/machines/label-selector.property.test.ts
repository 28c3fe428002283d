/** Laws of label selectors over random selectors and labels; the oracle is Kubernetes' definition, written out here. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LabelSelector, LabelSelectorRequirement } from "../../../src/api/scheduler-config.ts";
import { bothSelectors, selectorMatches } from "../../../src/machines/shared/label-selector.ts";

type Labels = Record<string, string>;

/** Few keys and values, so selectors and labels meet often; two keys every object inherits a property of. */
const key = fc.constantFrom("app", "tier", "example.com/team", "zone", "constructor", "toString");
const value = fc.constantFrom("", "a", "b", "c");

const labels: fc.Arbitrary<Labels> = fc
  .array(fc.tuple(key, value), { maxLength: 5 })
  .map((entries) => Object.fromEntries(entries));

const requirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
  fc.record({
    key,
    operator: fc.constantFrom("In" as const, "NotIn" as const),
    values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key, operator: fc.constantFrom("Exists" as const, "DoesNotExist" as const) }),
);

const selector: fc.Arbitrary<LabelSelector | undefined> = fc.option(
  fc.record(
    {
      matchLabels: fc.array(fc.tuple(key, value), { maxLength: 3 }).map((e) => Object.fromEntries(e)),
      matchExpressions: fc.array(requirement, { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

/**
 * The definition: a selector is a list of requirements (each matchLabels entry is `key In [value]`), all of
 * which must hold; a label is there only if the object itself carries it.
 */
function oracle(s: LabelSelector | undefined, object: Labels): boolean {
  if (s === undefined) return true;
  const lookup = new Map(Object.entries(object));
  const requirements: LabelSelectorRequirement[] = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => ({
      key: k,
      operator: "In" as const,
      values: [v],
    })),
    ...(s.matchExpressions ?? []),
  ];
  for (const r of requirements) {
    const present = lookup.has(r.key);
    const listed = present && (r.values ?? []).includes(lookup.get(r.key) as string);
    const ok = { In: listed, NotIn: !listed, Exists: present, DoesNotExist: !present }[r.operator];
    if (!ok) return false;
  }
  return true;
}

describe("label selectors", () => {
  it("match exactly as Kubernetes defines it", () => {
    fc.assert(
      fc.property(selector, labels, (s, object) => {
        expect(selectorMatches(s, object)).toBe(oracle(s, object));
      }),
    );
  });

  it("bothSelectors(a, b) matches exactly the objects both a and b match", () => {
    fc.assert(
      fc.property(selector, selector, labels, (a, b, object) => {
        const expected = oracle(a, object) && oracle(b, object);
        const both = bothSelectors(a, b);
        expect(oracle(both, object)).toBe(expected);
        expect(selectorMatches(both, object)).toBe(expected);
      }),
    );
  });

  it("bothSelectors with conflicting matchLabels values matches nothing, whatever else is asked", () => {
    fc.assert(
      fc.property(
        key,
        fc.uniqueArray(value, { minLength: 2, maxLength: 2 }),
        selector,
        selector,
        labels,
        (k, [x, y], a, b, object) => {
          const left = { ...a, matchLabels: { ...a?.matchLabels, [k]: x as string } };
          const right = { ...b, matchLabels: { ...b?.matchLabels, [k]: y as string } };
          expect(selectorMatches(bothSelectors(left, right), object)).toBe(false);
          expect(selectorMatches(bothSelectors(left, right), { ...object, [k]: x as string })).toBe(false);
        },
      ),
    );
  });

  it("a selector made of an object's own labels matches it, as matchLabels and as In expressions", () => {
    fc.assert(
      fc.property(labels, (object) => {
        expect(selectorMatches({ matchLabels: object }, object)).toBe(true);
        const expressions = Object.entries(object).map(([k, v]) => ({
          key: k,
          operator: "In" as const,
          values: [v],
        }));
        expect(selectorMatches({ matchExpressions: expressions }, object)).toBe(true);
      }),
    );
  });

  it("NotIn is the negation of In for objects carrying the key, and matches objects without it", () => {
    const reached = { carrying: 0, without: 0 };
    fc.assert(
      fc.property(key, fc.uniqueArray(value, { minLength: 1, maxLength: 3 }), labels, (k, values, object) => {
        const notIn = selectorMatches({ matchExpressions: [{ key: k, operator: "NotIn", values }] }, object);
        const inSet = selectorMatches({ matchExpressions: [{ key: k, operator: "In", values }] }, object);
        if (Object.hasOwn(object, k)) {
          reached.carrying++;
          expect(notIn).toBe(!inSet);
        } else {
          reached.without++;
          expect(notIn).toBe(true);
          expect(inSet).toBe(false);
        }
      }),
    );
    // Both kinds of object were checked, many times.
    expect(reached.carrying).toBeGreaterThan(5);
    expect(reached.without).toBeGreaterThan(5);
  });

  it("Exists and DoesNotExist are each other's negation", () => {
    fc.assert(
      fc.property(key, labels, (k, object) => {
        const exists = selectorMatches({ matchExpressions: [{ key: k, operator: "Exists" }] }, object);
        const absent = selectorMatches({ matchExpressions: [{ key: k, operator: "DoesNotExist" }] }, object);
        expect(exists).toBe(Object.hasOwn(object, k));
        expect(absent).toBe(!exists);
      }),
    );
  });
});
