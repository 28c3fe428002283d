/** The one event every machine is fed (`observed`), the guard shape over its facts, and the types of such a machine. */

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

/**
 * The `types` of a machine the engine runs: it keeps no context (its state is all it stores) and its only event
 * is `observed` with these facts, as `kindStep` assumes.
 */
export function observedMachineTypes<Facts>() {
  return { context: {} as Record<string, never>, events: {} as ObservedEvent<Facts> };
}
