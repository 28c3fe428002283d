/** The design record's aggregation of a request's purposes and its own wishes into one `dedicated` and one list of trait wishes. Pure. */
import type { PurposeSpec } from "../../api/purpose.ts";
import { type TraitWish, traitWish, wishKey } from "./traits.ts";

/** What scheduling works with. */
export interface SchedulingWishes {
  /** A cluster of its own (true), sharing allowed (false), or the template decides (undefined). */
  readonly dedicated: boolean | undefined;
  /** Each wish once (by its traits). */
  readonly traits: readonly TraitWish[];
}

/**
 * `own.dedicated` when set wins; else true if any purpose says true, false if one says false, else
 * undefined. Wishes of the same traits merge: `optional` ANDed over all; on conflicting `negated` the
 * request's own wish wins, else the first purpose in the list. Order: own wishes first, then the
 * purposes' in order of first appearance.
 */
export function aggregateWishes(
  purposes: readonly PurposeSpec[],
  own: { readonly dedicated?: boolean; readonly traits?: readonly TraitWish[] },
): SchedulingWishes | { problem: string } {
  const merged = new Map<string, { wish: TraitWish; negatedFixed: boolean }>();
  const add = (wish: TraitWish, fixesNegation: boolean) => {
    const key = wishKey(wish);
    const before = merged.get(key);
    if (!before) {
      merged.set(key, { wish, negatedFixed: fixesNegation });
      return;
    }
    merged.set(key, {
      wish: { ...before.wish, optional: before.wish.optional && wish.optional },
      negatedFixed: before.negatedFixed,
    });
  };
  for (const wish of own.traits ?? []) add(wish, true);
  for (const [index, purpose] of purposes.entries()) {
    for (const request of purpose.traits ?? []) {
      const wish = traitWish(request);
      if ("problem" in wish)
        return { problem: `purpose ${index + 1}, trait ${JSON.stringify(request)}: ${wish.problem}` };
      add(wish, false);
    }
  }
  const dedicated =
    own.dedicated ??
    (purposes.some((purpose) => purpose.dedicated === true)
      ? true
      : purposes.some((purpose) => purpose.dedicated === false)
        ? false
        : undefined);
  return { dedicated, traits: [...merged.values()].map((entry) => entry.wish) };
}
