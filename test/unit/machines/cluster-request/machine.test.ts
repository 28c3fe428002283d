/** Path coverage of the ClusterRequest statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import {
  type ClusterRequestFacts,
  clusterRequestMachine,
} from "../../../../src/machines/cluster-request/machine.ts";
import {
  everyCombination,
  expectEveryTransitionTaken,
  observedEach,
} from "../../../support/machine-coverage.ts";

/** Every combination of the facts the guards read. */
const events = observedEach(
  everyCombination<ClusterRequestFacts>({
    deleting: [false, true],
    decision: ["place", "replace", "wait", "deny", "misconfigured"],
    held: [false, true],
    holdsNothing: [false, true],
    clusterDeletionDone: [false, true],
  }),
);

describe("the ClusterRequest statechart", () => {
  it("reaches every state from Pending and takes every transition of the chart on a generated path plus one event", () => {
    const { states, transitions } = expectEveryTransitionTaken(clusterRequestMachine, events);
    // `deleting.checking` only decides where to go (its eventless transitions always leave it).
    expect(states).toEqual(
      [
        "deleting.released",
        "deleting.releasing",
        "deleting.waitingForCluster",
        "denied",
        "granted",
        "misconfigured",
        "pending",
        "replacing",
        "scheduling",
      ].sort(),
    );
    expect(transitions).toBeGreaterThan(25);
  });
});
