/** Cluster names for an Event's message: the first few, then how many more (an Event stays short). */

/** At most this many names in an Event; the rest are counted. */
export const EVENT_NAMES_SHOWN = 10;

/** "a, b, c" — at most {@link EVENT_NAMES_SHOWN} names, then how many more. */
export function namesShown(names: readonly string[]): string {
  const shown = names.slice(0, EVENT_NAMES_SHOWN).join(", ");
  const more = names.length - EVENT_NAMES_SHOWN;
  return more > 0 ? `${shown} and ${more} more` : shown;
}
