/** The actions of a machine as names only: transition() returns them as data, the kind's step translates them. */
import type { EventRecord } from "./machine-step.ts";

/** An action that is never run: it exists so that `setup()` knows its name (and the type of its params). */
const named = () => {};

/**
 * The actions every machine-backed kind shares (`addFinalizer`, `removeFinalizer`, `recordEvent` with an
 * {@link EventRecord}, which `kindStep` translates for every kind) and the kind's own actions without params,
 * by name. Actions with params are added beside them, so that `setup()` types their params.
 */
export function actionsAsData<const Own extends string>(...own: readonly Own[]) {
  return {
    ...(Object.fromEntries(own.map((name) => [name, named])) as Record<Own, typeof named>),
    addFinalizer: named,
    removeFinalizer: named,
    recordEvent: (_: unknown, _params: EventRecord) => {},
  };
}

/** The `recordEvent` action of a fixed Event (one whose words depend on the facts gives its params as a function). */
export const recordEvent = (record: EventRecord) => ({ type: "recordEvent", params: record }) as const;
