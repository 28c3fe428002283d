/** The fast transition gives exactly what xstate's own transition() gives, from every state for every event. */

import { describe, expect, it } from "vitest";
import { getShortestPaths } from "xstate/graph";
import { clusterMachine } from "../../../../src/machines/cluster/machine.ts";
import { pureTransition, referenceTransition } from "../../../../src/machines/shared/pure-transition.ts";
import { observedEvents } from "../../../support/cluster-events.ts";

const actionsOf = (actions: ReadonlyArray<{ type: string; params?: unknown }>) =>
  actions.map((action) => ({ type: action.type, params: action.params }));

describe("pureTransition", () => {
  it("matches xstate's transition() in next state and actions for every reachable state and event", () => {
    const fast = pureTransition(clusterMachine);
    const states = getShortestPaths(clusterMachine, { events: observedEvents }).map((path) => path.state);
    let compared = 0;
    for (const state of states) {
      for (const event of observedEvents) {
        const [expectedSnapshot, expectedActions] = referenceTransition(clusterMachine, state, event);
        const [snapshot, actions] = fast(state, event);
        expect(snapshot.value).toEqual(expectedSnapshot.value);
        expect(snapshot.status).toBe(expectedSnapshot.status);
        expect(actionsOf(actions)).toEqual(actionsOf(expectedActions));
        compared++;
      }
    }
    expect(compared).toBe(states.length * observedEvents.length);
    expect(states.length).toBe(8);
  });

  it("keeps no actions from one call to the next", () => {
    const fast = pureTransition(clusterMachine);
    const pending = clusterMachine.resolveState({ value: "pending", context: {} });
    const [, first] = fast(pending, observedEvents[0] as (typeof observedEvents)[number]);
    const [, second] = fast(pending, observedEvents[0] as (typeof observedEvents)[number]);
    expect(second).not.toBe(first);
    expect(actionsOf(second)).toEqual(actionsOf(first));
  });
});
