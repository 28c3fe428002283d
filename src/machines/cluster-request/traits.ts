/** Trait wishes (design record: traits, optional, negated, equivalent traits) and how a profile's traits meet them. Pure. */
import type { TraitRequest } from "../../api/purpose.ts";

/** One wish about a cluster's traits, normalised: `traits` = the equivalent traits (any one will do), sorted, unique, at least one. */
export interface TraitWish {
  readonly traits: readonly string[];
  readonly optional: boolean;
  readonly negated: boolean;
}

/** Characters a trait name may not contain: they separate or mark wishes in the annotation syntax. */
const FORBIDDEN = /[\s,|?!]/;

/** A TraitRequest (Purpose resource) as a wish, or what is wrong with it. */
export function traitWish(request: TraitRequest): TraitWish | { problem: string } {
  const hasTrait = request.trait !== undefined;
  const hasAnyOf = request.anyOf !== undefined;
  if (hasTrait === hasAnyOf) return { problem: "exactly one of trait and anyOf must be set" };
  const names = hasTrait ? [request.trait ?? ""] : [...(request.anyOf ?? [])];
  if (names.length === 0) return { problem: "anyOf must name at least one trait" };
  const bad = names.find((name) => name === "" || FORBIDDEN.test(name));
  if (bad !== undefined) return { problem: `"${bad}" is not a trait name (non-empty, no spaces or , | ? !)` };
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
 * have, `|` equivalent traits, either marker order); blank text is no wishes.
 */
export function parseTraitList(text: string): { wishes: readonly TraitWish[] } | { problem: string } {
  const wishes: TraitWish[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (item === "") {
      if (text.trim() === "") continue;
      return { problem: `empty item in "${text}"` };
    }
    let rest = item;
    let optional = false;
    let negated = false;
    while (rest.startsWith("?") || rest.startsWith("!")) {
      if (rest.startsWith("?")) optional = true;
      else negated = true;
      rest = rest.slice(1);
    }
    const wish = traitWish({ anyOf: rest.split("|"), optional, negated });
    if ("problem" in wish) return { problem: `"${item}": ${wish.problem}` };
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
  /** The required wishes that do not hold. */
  readonly missing: readonly TraitWish[];
  /** How many optional wishes hold (more is better). */
  readonly preferred: number;
}

/** Matches wishes against offered traits: optional ones only rank, required ones decide. */
export function matchTraits(wishes: readonly TraitWish[], offered: Iterable<string>): TraitMatch {
  const set = new Set(offered);
  const missing = wishes.filter((wish) => !wish.optional && !holds(wish, set));
  const preferred = wishes.filter((wish) => wish.optional && holds(wish, set)).length;
  return { admissible: missing.length === 0, missing, preferred };
}

/** A wish in words, for messages. */
export function describeWish(wish: TraitWish): string {
  const what = wish.traits.length === 1 ? (wish.traits[0] ?? "") : `any of ${wish.traits.join(", ")}`;
  return wish.negated ? `not ${what}` : what;
}
