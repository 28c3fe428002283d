/** Path coverage of the Cluster statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import { type AnyStateNode, type AnyTransitionDefinition, createActor } from "xstate";
import { getShortestPaths } from "xstate/graph";
import { clusterMachine } from "../../../../src/machines/cluster/machine.ts";
import { stateValueToString } from "../../../../src/machines/shared/state-value.ts";
import { observedEvents as events } from "../../../support/cluster-events.ts";

/** Every transition the chart defines: event transitions and eventless (`always`) ones, in every state. */
function definedTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  const own = [...node.transitions.values()].flat().concat(node.always ?? []);
  return [...own, ...Object.values(node.states).flatMap(definedTransitions)];
}

const transitionKey = (t: AnyTransitionDefinition) =>
  `${t.source.id} --${t.eventType}${t.guard ? ` [${String((t.guard as { type?: string }).type ?? t.guard)}]` : ""}--> ${(t.target ?? []).map((n) => n.id).join(",")}`;

describe("the Cluster statechart", () => {
  const paths = getShortestPaths(clusterMachine, { events });

  it("reaches every state from Pending", () => {
    const reached = new Set(paths.map((path) => stateValueToString(path.state.value)));
    expect([...reached].sort()).toEqual(
      [
        "deleting.blocked",
        "deleting.released",
        "deleting.releasing",
        "failed",
        "pending",
        "provisioning",
        "ready",
        "updating",
      ].sort(),
    );
  });

  it("takes every transition of the chart on a generated path: a shortest path to a state plus one event", () => {
    const all = new Set(definedTransitions(clusterMachine.root).map(transitionKey));
    const taken = new Set<string>();
    const record = (event: { type: string; _transitions?: AnyTransitionDefinition[] }) => {
      if (event.type === "@xstate.microstep")
        for (const t of event._transitions ?? []) taken.add(transitionKey(t));
    };
    for (const path of paths) {
      for (const event of events) {
        const actor = createActor(clusterMachine, { snapshot: path.state, inspect: record });
        actor.start();
        actor.send(event);
        actor.stop();
      }
    }
    expect([...all].filter((key) => !taken.has(key))).toEqual([]);
    expect(all.size).toBeGreaterThan(20);
  });
});
