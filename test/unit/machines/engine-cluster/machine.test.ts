/** Path coverage of the EngineCluster statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import type { EngineClusterFacts } from "../../../../src/machines/engine-cluster/machine.ts";
import { engineClusterMachine } from "../../../../src/machines/engine-cluster/machine.ts";
import { observedEvents as clusterEvents } from "../../../support/cluster-events.ts";
import { expectEveryTransitionTaken, observedEach } from "../../../support/machine-coverage.ts";

/** The Cluster's combinations of the shared facts, each with and without an owner, published or not. */
const events = observedEach(
  clusterEvents.flatMap(({ facts }) =>
    [undefined, "workload"].flatMap((owner) =>
      [false, true].map((published): EngineClusterFacts => ({ ...facts, owner, published })),
    ),
  ),
);

describe("the EngineCluster statechart", () => {
  it("reaches every state from Pending and takes every transition of the chart on a generated path plus one event", () => {
    const { states, transitions } = expectEveryTransitionTaken(engineClusterMachine, events);
    expect(states).toEqual(
      [
        "deleting.blocked",
        "deleting.released",
        "deleting.releasing",
        "failed",
        "pending",
        "provisioned",
        "provisioning",
      ].sort(),
    );
    expect(transitions).toBeGreaterThan(15);
  });
});
