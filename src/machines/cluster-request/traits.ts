/** Trait wishes (design record: traits, optional, negated, equivalent traits) and how a profile's traits meet them. Pure. */
import { PURPOSE_VALIDATION_MESSAGES } from "../../api/constants/purpose.ts";
import type { TraitRequest } from "../../api/purpose.ts";

/** One wish about a cluster's traits, normalised: `traits` = the equivalent traits (any one will do), sorted, unique, at least one. */
export interface TraitWish {
  /** The equivalent traits, sorted and unique; at least one. */
  readonly traits: readonly string[];
  /** Preferred, not required: only ranks profiles, never excludes one. */
  readonly optional: boolean;
  /** The cluster must have none of `traits`. */
  readonly negated: boolean;
}

/** Characters a trait name may not contain: they separate or mark wishes in the annotation syntax. */
const FORBIDDEN = /[\s,|?!]/;

/** The markers an item of the annotation syntax may start with, each at most once, in either order. */
const MARKERS = /^(\?!|!\?|\?|!)?(.*)$/s;

/** A TraitRequest (Purpose resource) as a wish, or what is wrong with it. */
export function traitWish(request: TraitRequest): TraitWish | { problem: string } {
  const hasTrait = request.trait !== undefined;
  const hasAnyOf = request.anyOf !== undefined;
  // The Purpose CRD refuses these too; the same words say it whichever check catches it.
  if (hasTrait && hasAnyOf)
    return { problem: `${PURPOSE_VALIDATION_MESSAGES.purposeTraitOrAnyOf} (both are)` };
  if (!hasTrait && !hasAnyOf)
    return { problem: `${PURPOSE_VALIDATION_MESSAGES.purposeTraitOrAnyOf} (neither is)` };
  const names = hasTrait ? [request.trait ?? ""] : [...(request.anyOf ?? [])];
  if (names.length === 0) return { problem: "anyOf is empty; it must name at least one trait" };
  const bad = names.find((name) => name === "" || FORBIDDEN.test(name));
  if (bad !== undefined) {
    return { problem: `${JSON.stringify(bad)} is not a trait name (non-empty, no whitespace or , | ? !)` };
  }
  return {
    traits: [...new Set(names)].sort(),
    optional: request.optional === true,
    negated: request.negated === true,
  };
}

/** Identity of a wish regardless of optional/negated: its traits joined by `|`. */
export function wishKey(wish: TraitWish): string {
  return wish.traits.join("|");
}

/**
 * Parses the annotation syntax: comma-separated items `[?][!]name[|name…]` (`?` optional, `!` must not
 * have, `|` equivalent traits, markers in either order); blank text is no wishes.
 */
export function parseTraitList(text: string): { wishes: readonly TraitWish[] } | { problem: string } {
  if (text.trim() === "") return { wishes: [] };
  const wishes: TraitWish[] = [];
  for (const [index, raw] of text.split(",").entries()) {
    const item = raw.trim();
    if (item === "") return { problem: `item ${index + 1} of ${JSON.stringify(text)} is empty` };
    const [, markers = "", names = ""] = MARKERS.exec(item) ?? [];
    // `!!x` could be read as "not not x": refuse doubled markers rather than guess.
    if (names.startsWith("?") || names.startsWith("!")) {
      return { problem: `${JSON.stringify(item)}: each of the markers ? and ! may appear once` };
    }
    const wish = traitWish({
      anyOf: names.split("|"),
      optional: markers.includes("?"),
      negated: markers.includes("!"),
    });
    if ("problem" in wish) return { problem: `${JSON.stringify(item)}: ${wish.problem}` };
    wishes.push(wish);
  }
  return { wishes };
}

/** One item of the annotation syntax for `wish` (the inverse of {@link parseTraitList} for one item). */
export function formatWish(wish: TraitWish): string {
  return `${wish.optional ? "?" : ""}${wish.negated ? "!" : ""}${wish.traits.join("|")}`;
}

/** Whether `offered` meets the wish: one of its traits present, or (negated) none of them. */
export function holds(wish: TraitWish, offered: ReadonlySet<string>): boolean {
  const present = wish.traits.some((trait) => offered.has(trait));
  return wish.negated ? !present : present;
}

/** How a profile's traits meet a list of wishes. */
export interface TraitMatch {
  /** Every required (non-optional) wish holds. */
  readonly admissible: boolean;
  /** The required wishes that do not hold, in the order of the wishes. */
  readonly missing: readonly TraitWish[];
  /** How many optional wishes hold (more is better). */
  readonly preferred: number;
}

/** Matches wishes against offered traits: required ones decide, optional ones only rank. */
export function matchTraits(wishes: readonly TraitWish[], offered: Iterable<string>): TraitMatch {
  const set = new Set(offered);
  const missing = wishes.filter((wish) => !wish.optional && !holds(wish, set));
  const preferred = wishes.filter((wish) => wish.optional && holds(wish, set)).length;
  return { admissible: missing.length === 0, missing, preferred };
}

/** A wish in words, for messages: `a`, `not a`, `any of a, b`, `none of a, b`. */
export function describeWish(wish: TraitWish): string {
  if (wish.traits.length === 1) return wish.negated ? `not ${wish.traits[0]}` : `${wish.traits[0]}`;
  return `${wish.negated ? "none" : "any"} of ${wish.traits.join(", ")}`;
}
