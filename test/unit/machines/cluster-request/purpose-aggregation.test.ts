/** Aggregating a request's purposes and its own wishes: dedicated, merged traits, precedence. */
import { describe, expect, it } from "vitest";
import type { PurposeSpec } from "../../../../src/api/purpose.ts";
import {
  aggregateWishes,
  type SchedulingWishes,
} from "../../../../src/machines/cluster-request/purpose-aggregation.ts";
import type { TraitWish } from "../../../../src/machines/cluster-request/traits.ts";

const WORKERLESS = "cluster.openmcp.cloud/workerless";
const NODELESS = "foo.bar.baz/nodeless";
const AWS = "infrastructure/vendor/aws";

function wish(traits: string[], flags: { optional?: boolean; negated?: boolean } = {}): TraitWish {
  return { traits, optional: flags.optional ?? false, negated: flags.negated ?? false };
}

function aggregated(...args: Parameters<typeof aggregateWishes>): SchedulingWishes {
  const result = aggregateWishes(...args);
  if ("problem" in result) throw new Error(`unexpected problem: ${result.problem}`);
  return result;
}

describe("aggregateWishes: dedicated", () => {
  it("takes the request's own value over every purpose", () => {
    expect(aggregated([{ dedicated: true }], { dedicated: false }).dedicated).toBe(false);
    expect(aggregated([{ dedicated: false }, {}], { dedicated: true }).dedicated).toBe(true);
  });

  it("is true when any purpose says true, false when one says false and none true, else undefined", () => {
    expect(aggregated([{ dedicated: false }, { dedicated: true }, {}], {}).dedicated).toBe(true);
    expect(aggregated([{}, { dedicated: false }], {}).dedicated).toBe(false);
    expect(aggregated([{}, {}], {}).dedicated).toBeUndefined();
    expect(aggregated([], {}).dedicated).toBeUndefined();
  });
});

describe("aggregateWishes: traits", () => {
  it("converts the purposes' trait requests, any-of included", () => {
    const mcp: PurposeSpec = { dedicated: true, traits: [{ anyOf: [WORKERLESS, NODELESS] }] };
    expect(aggregated([mcp], {})).toEqual({ dedicated: true, traits: [wish([WORKERLESS, NODELESS].sort())] });
  });

  it("keeps each wish once and ANDs optional over every occurrence", () => {
    const purposes: PurposeSpec[] = [
      {
        traits: [
          { trait: AWS, optional: true },
          { trait: "a", optional: true },
        ],
      },
      { traits: [{ trait: AWS }, { trait: "a", optional: true }] },
    ];
    expect(aggregated(purposes, {}).traits).toEqual([wish([AWS]), wish(["a"], { optional: true })]);
    expect(aggregated(purposes, { traits: [wish(["a"])] }).traits).toEqual([wish(["a"]), wish([AWS])]);
  });

  it("lets the request's own negated win over the purposes', and otherwise the first purpose's", () => {
    const purposes: PurposeSpec[] = [
      { traits: [{ trait: AWS }] },
      { traits: [{ trait: AWS, negated: true }] },
    ];
    expect(aggregated(purposes, {}).traits).toEqual([wish([AWS])]);
    expect(aggregated([...purposes].reverse(), {}).traits).toEqual([wish([AWS], { negated: true })]);
    expect(aggregated(purposes, { traits: [wish([AWS], { negated: true, optional: true })] }).traits).toEqual(
      [wish([AWS], { negated: true })],
    );
  });

  it("treats wishes with different sets of equivalent traits as different wishes", () => {
    const purposes: PurposeSpec[] = [{ traits: [{ trait: WORKERLESS }, { anyOf: [WORKERLESS, NODELESS] }] }];
    expect(aggregated(purposes, {}).traits).toEqual([
      wish([WORKERLESS]),
      wish([WORKERLESS, NODELESS].sort()),
    ]);
  });

  it("orders the request's own wishes first, then the purposes' in order of first appearance", () => {
    const purposes: PurposeSpec[] = [
      { traits: [{ trait: "c" }, { trait: "a" }] },
      { traits: [{ trait: "b" }] },
    ];
    expect(
      aggregated(purposes, { traits: [wish(["z"]), wish(["a"])] }).traits.map((w) => w.traits[0]),
    ).toEqual(["z", "a", "c", "b"]);
  });

  it("names the purpose and the trait that cannot be read", () => {
    const purposes: PurposeSpec[] = [
      { traits: [{ trait: AWS }] },
      { traits: [{ trait: "a" }, { anyOf: [] }] },
    ];
    expect(aggregateWishes(purposes, {})).toEqual({
      problem: "purpose 2, traits[1]: anyOf is empty; it must name at least one trait",
    });
  });
});
