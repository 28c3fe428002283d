/** The guard shape both machines use: a predicate over the facts of the one `observed` event. */

/** The event every machine of the engine is fed: "here is what the world looks like now". */
export type ObservedEvent<Facts> = { readonly type: "observed"; readonly facts: Facts };

/**
 * A guard over the facts of an `observed` event. Any other event (XState's own init event, when an actor
 * starts a machine) holds no facts, and the guard is false: guards never throw.
 */
export function whenObserved<Facts>(predicate: (facts: Facts) => boolean) {
  return ({ event }: { event: { type: string } }) =>
    event.type === "observed" && predicate((event as ObservedEvent<Facts>).facts);
}
