/** Path coverage of a statechart, said once for every machine: generated paths reach every state and take every transition. */
import { expect } from "vitest";
import { type AnyStateMachine, type AnyStateNode, type AnyTransitionDefinition, createActor } from "xstate";
import { getShortestPaths } from "xstate/graph";
import { stateValueToString } from "../../src/machines/shared/state-value.ts";

/** Every combination of the values each fact may take, as facts objects (e.g. every guard's inputs). */
export function everyCombination<T extends object>(
  values: { readonly [K in keyof T]: readonly T[K][] },
): T[] {
  return Object.entries(values).reduce<Array<Record<string, unknown>>>(
    (combinations, [key, options]) =>
      combinations.flatMap((partial) =>
        (options as readonly unknown[]).map((value) => ({ ...partial, [key]: value })),
      ),
    [{}],
  ) as T[];
}

/** `observed` events carrying each of `facts`. */
export const observedEach = <F>(facts: readonly F[]) =>
  facts.map((each) => ({ type: "observed" as const, facts: each }));

/** Every transition the chart defines: event transitions and eventless (`always`) ones, in every state. */
function definedTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  const own = [...node.transitions.values()].flat().concat(node.always ?? []);
  return [...own, ...Object.values(node.states).flatMap(definedTransitions)];
}

const transitionKey = (t: AnyTransitionDefinition) =>
  `${t.source.id} --${t.eventType}${t.guard ? ` [${String((t.guard as { type?: string }).type ?? t.guard)}]` : ""}--> ${(t.target ?? []).map((n) => n.id).join(",")}`;

/**
 * Asserts that `events` drive `machine` through every transition its chart defines: from each state a
 * shortest path reaches, one more event of each kind, watching every microstep. Returns the states the
 * paths reach (for the caller to compare with the chart's) and how many transitions there are.
 */
export function expectEveryTransitionTaken(
  machine: AnyStateMachine,
  events: ReadonlyArray<{ readonly type: string }>,
): { readonly states: string[]; readonly transitions: number } {
  const paths = getShortestPaths(machine, { events: [...events] as never });
  const all = new Set(definedTransitions(machine.root).map(transitionKey));
  const taken = new Set<string>();
  const record = (event: { type: string; _transitions?: AnyTransitionDefinition[] }) => {
    if (event.type === "@xstate.microstep")
      for (const t of event._transitions ?? []) taken.add(transitionKey(t));
  };
  for (const path of paths) {
    for (const event of events) {
      const actor = createActor(machine, { snapshot: path.state, inspect: record });
      actor.start();
      actor.send(event as never);
      actor.stop();
    }
  }
  expect([...all].filter((key) => !taken.has(key))).toEqual([]);
  return {
    states: [...new Set(paths.map((path) => stateValueToString(path.state.value)))].sort(),
    transitions: all.size,
  };
}
