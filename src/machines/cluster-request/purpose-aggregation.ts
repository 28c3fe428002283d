/** The design record's aggregation of a request's purposes and its own wishes into one `dedicated` and one list of trait wishes. Pure. */
import type { PurposeSpec } from "../../api/purpose.ts";
import { type TraitWish, traitWish, wishKey } from "./traits.ts";

/** What scheduling works with. */
export interface SchedulingWishes {
  /** A cluster of its own (true), sharing allowed (false), or the template decides (undefined). */
  readonly dedicated: boolean | undefined;
  /** Each wish once (by {@link wishKey}): the request's own first, then the purposes', each in order of first appearance. */
  readonly traits: readonly TraitWish[];
}

/**
 * Aggregates purposes and the request's own wishes as the design record says.
 *
 * `dedicated`: the request's own when set; else true if any purpose says true, false if one says false,
 * else undefined.
 *
 * Traits: wishes with the same key merge into one; `optional` is ANDed over all of them (preferred only if
 * every source merely prefers it); `negated` comes from the first occurrence. The request's own wishes are
 * taken first and the purposes' in list order, so the first occurrence is the request's own when there is
 * one, else the first purpose's: the precedence the record asks for, and a deterministic order.
 */
export function aggregateWishes(
  purposes: readonly PurposeSpec[],
  own: { readonly dedicated?: boolean; readonly traits?: readonly TraitWish[] },
): SchedulingWishes | { problem: string } {
  const merged = new Map<string, TraitWish>();
  const add = (wish: TraitWish) => {
    const key = wishKey(wish);
    const before = merged.get(key);
    merged.set(key, before ? { ...before, optional: before.optional && wish.optional } : wish);
  };
  for (const wish of own.traits ?? []) add(wish);
  for (const [purposeIndex, purpose] of purposes.entries()) {
    for (const [traitIndex, request] of (purpose.traits ?? []).entries()) {
      const wish = traitWish(request);
      if ("problem" in wish) {
        return { problem: `purpose ${purposeIndex + 1}, traits[${traitIndex}]: ${wish.problem}` };
      }
      add(wish);
    }
  }
  return { dedicated: aggregateDedicated(purposes, own.dedicated), traits: [...merged.values()] };
}

/** The record's rule for `dedicated`: the request's own, else any purpose's true, else any purpose's false. */
function aggregateDedicated(purposes: readonly PurposeSpec[], own: boolean | undefined): boolean | undefined {
  if (own !== undefined) return own;
  if (purposes.some((purpose) => purpose.dedicated === true)) return true;
  if (purposes.some((purpose) => purpose.dedicated === false)) return false;
  return undefined;
}
