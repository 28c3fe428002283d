/** Label selectors: matching as Kubernetes does, ANDing two of them, and naming what is wrong with one. */
import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../../../../src/api/scheduler-config.ts";
import {
  bothSelectors,
  selectorMatches,
  selectorProblems,
  validLabelKey,
  validLabelValue,
} from "../../../../src/machines/shared/label-selector.ts";

const labels = { app: "web", tier: "frontend", "example.com/team": "a" };

describe("selectorMatches", () => {
  it("selects everything with an absent or empty selector, even objects without labels", () => {
    expect(selectorMatches(undefined, undefined)).toBe(true);
    expect(selectorMatches({}, undefined)).toBe(true);
    expect(selectorMatches({ matchLabels: {}, matchExpressions: [] }, labels)).toBe(true);
  });

  it("needs every matchLabels entry with exactly that value", () => {
    expect(selectorMatches({ matchLabels: { app: "web", tier: "frontend" } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { app: "web", tier: "backend" } }, labels)).toBe(false);
    expect(selectorMatches({ matchLabels: { zone: "" } }, labels)).toBe(false);
    expect(selectorMatches({ matchLabels: { zone: "" } }, { zone: "" })).toBe(true);
  });

  it("reads In, NotIn, Exists and DoesNotExist as Kubernetes does", () => {
    const match = (requirement: NonNullable<LabelSelector["matchExpressions"]>[number]) =>
      selectorMatches({ matchExpressions: [requirement] }, labels);
    expect(match({ key: "app", operator: "In", values: ["api", "web"] })).toBe(true);
    expect(match({ key: "app", operator: "In", values: ["api"] })).toBe(false);
    expect(match({ key: "zone", operator: "In", values: [""] })).toBe(false);
    expect(match({ key: "app", operator: "NotIn", values: ["api"] })).toBe(true);
    expect(match({ key: "app", operator: "NotIn", values: ["web"] })).toBe(false);
    expect(match({ key: "zone", operator: "NotIn", values: ["a"] })).toBe(true);
    expect(match({ key: "tier", operator: "Exists" })).toBe(true);
    expect(match({ key: "zone", operator: "Exists" })).toBe(false);
    expect(match({ key: "zone", operator: "DoesNotExist" })).toBe(true);
    expect(match({ key: "tier", operator: "DoesNotExist" })).toBe(false);
  });

  it("never takes a property every object inherits for a label", () => {
    expect(selectorMatches({ matchExpressions: [{ key: "constructor", operator: "Exists" }] }, {})).toBe(
      false,
    );
    expect(selectorMatches({ matchExpressions: [{ key: "toString", operator: "DoesNotExist" }] }, {})).toBe(
      true,
    );
  });

  it("needs matchLabels and every expression together", () => {
    const selector: LabelSelector = {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "tier", operator: "In", values: ["backend"] }],
    };
    expect(selectorMatches(selector, labels)).toBe(false);
    expect(selectorMatches(selector, { ...labels, tier: "backend" })).toBe(true);
  });
});

describe("bothSelectors", () => {
  it("is the other selector when one selects everything", () => {
    const one: LabelSelector = { matchLabels: { app: "web" } };
    expect(bothSelectors(undefined, undefined)).toBeUndefined();
    expect(bothSelectors(one, undefined)).toBe(one);
    expect(bothSelectors(undefined, one)).toBe(one);
  });

  it("needs both selectors' labels and expressions", () => {
    const both = bothSelectors(
      { matchLabels: { app: "web" }, matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] },
      { matchLabels: { tier: "frontend" }, matchExpressions: [{ key: "app", operator: "Exists" }] },
    );
    expect(selectorMatches(both, labels)).toBe(true);
    expect(selectorMatches(both, { app: "web" })).toBe(false);
    expect(selectorMatches(both, { tier: "frontend" })).toBe(false);
    expect(selectorMatches(both, { ...labels, zone: "x" })).toBe(false);
  });

  it("matches nothing when the two ask for different values of one label", () => {
    const both = bothSelectors({ matchLabels: { app: "web" } }, { matchLabels: { app: "api" } });
    expect(selectorMatches(both, { app: "web" })).toBe(false);
    expect(selectorMatches(both, { app: "api" })).toBe(false);
    expect(selectorMatches(both, {})).toBe(false);
  });

  it("leaves both inputs as they were", () => {
    const a: LabelSelector = { matchLabels: { app: "web" }, matchExpressions: [] };
    const b: LabelSelector = { matchLabels: { app: "api", tier: "x" } };
    const before = JSON.stringify([a, b]);
    bothSelectors(a, b);
    expect(JSON.stringify([a, b])).toBe(before);
  });
});

describe("label keys and values", () => {
  it("accepts [prefix/]name keys as Kubernetes does", () => {
    for (const key of ["app", "app.kubernetes.io/name", "example.com/Team_1", "a", "x".repeat(63)]) {
      expect(validLabelKey(key), key).toBe(true);
    }
    for (const key of ["", "/x", "x/", "Example.com/x", "a/b/c", "-app", "app-", "a b", "x".repeat(64)]) {
      expect(validLabelKey(key), key).toBe(false);
    }
  });

  it("accepts empty values and up to 63 characters, alphanumeric at both ends", () => {
    for (const value of ["", "web", "a_b.c-d", "x".repeat(63)])
      expect(validLabelValue(value), value).toBe(true);
    for (const value of ["-web", "web.", "a/b", "a b", "x".repeat(64)]) {
      expect(validLabelValue(value), value).toBe(false);
    }
  });
});

describe("selectorProblems", () => {
  const at = "scheduler.selectors.clusters";

  it("finds nothing wrong with an absent or a well-formed selector", () => {
    expect(selectorProblems(undefined, at)).toEqual([]);
    expect(selectorProblems(null, at)).toEqual([]);
    expect(
      selectorProblems(
        {
          matchLabels: { "example.com/team": "a", tier: "" },
          matchExpressions: [
            { key: "app", operator: "In", values: ["web", "api"] },
            { key: "app", operator: "NotIn", values: ["db"] },
            { key: "zone", operator: "Exists" },
            { key: "legacy", operator: "DoesNotExist", values: [] },
          ],
        },
        at,
      ),
    ).toEqual([]);
  });

  it("names In without values and NotIn with an empty list", () => {
    expect(selectorProblems({ matchExpressions: [{ key: "app", operator: "In" }] }, at)).toEqual([
      `${at}.matchExpressions[0].values: In needs at least one value`,
    ]);
    expect(
      selectorProblems({ matchExpressions: [{ key: "app", operator: "NotIn", values: [] }] }, at),
    ).toEqual([`${at}.matchExpressions[0].values: NotIn needs at least one value`]);
  });

  it("names Exists and DoesNotExist with values", () => {
    expect(
      selectorProblems(
        {
          matchExpressions: [
            { key: "app", operator: "Exists" },
            { key: "app", operator: "Exists", values: ["web"] },
            { key: "app", operator: "DoesNotExist", values: ["web"] },
          ],
        },
        at,
      ),
    ).toEqual([
      `${at}.matchExpressions[1].values: Exists takes no values`,
      `${at}.matchExpressions[2].values: DoesNotExist takes no values`,
    ]);
  });

  it("names an unknown operator and lists the known ones", () => {
    expect(
      selectorProblems({ matchExpressions: [{ key: "app", operator: "Equals", values: ["web"] }] }, at),
    ).toEqual([`${at}.matchExpressions[0].operator: "Equals" is not one of In, NotIn, Exists, DoesNotExist`]);
    expect(selectorProblems({ matchExpressions: [{ key: "app" }] }, at)).toEqual([
      `${at}.matchExpressions[0].operator: undefined is not one of In, NotIn, Exists, DoesNotExist`,
    ]);
  });

  it("names bad keys and values, in matchLabels and in expressions", () => {
    expect(
      selectorProblems(
        {
          matchLabels: { "bad key": "x", app: "-web" },
          matchExpressions: [
            { key: "Example.com/x", operator: "Exists" },
            { key: "app", operator: "In", values: ["ok", "not ok"] },
          ],
        },
        at,
      ),
    ).toEqual([
      `${at}.matchLabels: "bad key" is not a valid label key`,
      `${at}.matchLabels.app: "-web" is not a valid label value`,
      `${at}.matchExpressions[0].key: "Example.com/x" is not a valid label key`,
      `${at}.matchExpressions[1].values: every value must be a valid label value`,
    ]);
    expect(selectorProblems({ matchLabels: { app: 3 } }, at)).toEqual([
      `${at}.matchLabels.app: 3 is not a valid label value`,
    ]);
  });

  it("names an unknown field and a selector, matchLabels or matchExpressions of the wrong shape", () => {
    expect(selectorProblems({ matchLabel: { app: "web" } }, at)).toEqual([
      `${at}.matchLabel: unknown field (matchLabels, matchExpressions)`,
    ]);
    expect(selectorProblems("app=web", at)).toEqual([`${at}: must be a label selector object`]);
    expect(selectorProblems([], at)).toEqual([`${at}: must be a label selector object`]);
    expect(selectorProblems({ matchLabels: ["app"] }, at)).toEqual([
      `${at}.matchLabels: must map label keys to values`,
    ]);
    expect(selectorProblems({ matchExpressions: { key: "app" } }, at)).toEqual([
      `${at}.matchExpressions: must be a list`,
    ]);
    expect(selectorProblems({ matchExpressions: ["app"] }, at)).toEqual([
      `${at}.matchExpressions[0]: must be {key, operator, values}`,
    ]);
  });
});
