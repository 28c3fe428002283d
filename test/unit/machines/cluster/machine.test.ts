/** Path coverage of the Cluster statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import { clusterMachine } from "../../../../src/machines/cluster/machine.ts";
import { observedEvents as events } from "../../../support/cluster-events.ts";
import { expectEveryTransitionTaken } from "../../../support/machine-coverage.ts";

describe("the Cluster statechart", () => {
  it("reaches every state from Pending and takes every transition of the chart on a generated path plus one event", () => {
    const { states, transitions } = expectEveryTransitionTaken(clusterMachine, events);
    expect(states).toEqual(
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
    expect(transitions).toBeGreaterThan(20);
  });
});
