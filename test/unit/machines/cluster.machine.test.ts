/** Path coverage of the Cluster statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import { type AnyStateNode, type AnyTransitionDefinition, createActor } from "xstate";
import { getShortestPaths } from "xstate/graph";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import {
  type ClusterEvent,
  type ClusterFacts,
  clusterMachine,
} from "../../../src/machines/cluster.machine.ts";
import type { VersionResolution } from "../../../src/machines/kubernetes-version.ts";
import { stateValueToString } from "../../../src/machines/state-value.ts";

const versions: Array<[boolean, VersionResolution | undefined]> = [
  [false, undefined],
  [true, { kind: "accepted", version: "1.33.3", deprecated: false }],
  [true, { kind: "unsupported", message: "not offered" }],
  [true, { kind: "downgrade", version: "1.32.7", message: "runs 1.33.3" }],
];
const backends: ClusterObservation[] = [
  { exists: false },
  { exists: true, phase: "provisioning", version: "1.33.3" },
  { exists: true, phase: "ready", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "ready", version: "1.32.7", endpoint: "https://a" },
  { exists: true, phase: "updating", version: "1.33.3", endpoint: "https://a" },
  { exists: true, phase: "deleting", version: "1.33.3" },
  { exists: true, phase: "failed", version: "1.33.3", message: "quota" },
];

/** Every combination of the facts that matter to the guards. */
const events: ClusterEvent[] = [false, true].flatMap((deleting) =>
  [false, true].flatMap((hasFinalizer) =>
    [[], ["request.clusters.openmcp.cloud/x"]].flatMap((foreignFinalizers) =>
      versions.flatMap(([profileFound, version]) =>
        backends.map((backend) => {
          const facts: ClusterFacts = {
            deleting,
            hasFinalizer,
            foreignFinalizers,
            profileFound,
            version,
            backend,
          };
          return { type: "observed" as const, facts };
        }),
      ),
    ),
  ),
);

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
