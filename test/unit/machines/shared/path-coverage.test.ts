/** Path coverage of every machine's statechart: generated paths reach every state and take every transition. */

import { describe, expect, it } from "vitest";
import type { AnyStateMachine } from "xstate";
import type { ScheduledEvent } from "../../../../src/api/hibernation-schedule.ts";
import type { AccessFacts } from "../../../../src/machines/access-request/machine.ts";
import { accessRequestMachine } from "../../../../src/machines/access-request/machine.ts";
import { clusterMachine } from "../../../../src/machines/cluster/machine.ts";
import {
  type ClusterRequestFacts,
  clusterRequestMachine,
} from "../../../../src/machines/cluster-request/machine.ts";
import {
  clusterSnapshotMachine,
  type SnapshotFacts,
} from "../../../../src/machines/cluster-snapshot/machine.ts";
import {
  clusterSnapshotScheduleMachine,
  type SnapshotScheduleFacts,
} from "../../../../src/machines/cluster-snapshot-schedule/machine.ts";
import type { EngineClusterFacts } from "../../../../src/machines/engine-cluster/machine.ts";
import { engineClusterMachine } from "../../../../src/machines/engine-cluster/machine.ts";
import {
  type EngineControlPlaneFacts,
  engineControlPlaneMachine,
} from "../../../../src/machines/engine-control-plane/machine.ts";
import {
  hibernationScheduleMachine,
  type ScheduleFacts,
} from "../../../../src/machines/hibernation-schedule/machine.ts";
import { type RolloutFacts, rolloutMachine } from "../../../../src/machines/rollout/machine.ts";
import {
  observedEvents as clusterEvents,
  clusterObservedEvents as clusterOwnEvents,
} from "../../../support/cluster-events.ts";
import {
  everyCombination,
  expectEveryTransitionTaken,
  observedEach,
} from "../../../support/machine-coverage.ts";

const bools = [false, true];
/** A schedule's latest event. */
const LATEST: ScheduledEvent = { action: "sleep", time: "2026-11-28T19:00:00Z" };

/** A snapshot's manifest as a backend returns it (its content does not matter to the machine). */
const SNAPSHOT_MANIFEST = {
  format: 1,
  backend: "local",
  cluster: { uid: "u", namespace: "n", name: "c" },
  kubernetesVersion: "1.36.3",
  takenAt: "2026-01-01T00:00:00Z",
  files: [],
  size: 0,
  checksum: "sha256:0",
} as const;

/** Each machine, every combination of the facts its guards read, and the states its paths must reach. */
const machines: ReadonlyArray<{
  readonly machine: AnyStateMachine;
  readonly events: ReadonlyArray<{ readonly type: string }>;
  readonly states: readonly string[];
  readonly transitions: number;
}> = [
  {
    machine: clusterMachine,
    events: clusterOwnEvents,
    states: [
      "pending",
      "takingOver",
      "claimingPoolMember",
      "provisioning",
      "ready",
      "updating",
      "hibernating",
      "hibernated",
      "waking",
      "failed",
      "deleting.blocked",
      "deleting.releasing",
      "deleting.released",
    ],
    transitions: 33 + 23,
  },
  {
    machine: engineClusterMachine,
    // The Cluster's combinations of the shared facts, each with and without an owner, published or not.
    events: observedEach(
      clusterEvents.flatMap(({ facts }) =>
        [undefined, "workload"].flatMap((owner) =>
          bools.map((published): EngineClusterFacts => ({ ...facts, owner, published })),
        ),
      ),
    ),
    states: [
      "pending",
      "provisioning",
      "provisioned",
      "failed",
      "deleting.blocked",
      "deleting.releasing",
      "deleting.released",
    ],
    transitions: 15,
  },
  {
    machine: engineControlPlaneMachine,
    // The same, each with its owner's infrastructure provisioned or not.
    events: observedEach(
      clusterEvents.flatMap(({ facts }) =>
        [undefined, "workload"].flatMap((owner) =>
          bools.flatMap((published) =>
            bools.map(
              (infrastructureReady): EngineControlPlaneFacts => ({
                ...facts,
                owner,
                published,
                infrastructureReady,
              }),
            ),
          ),
        ),
      ),
    ),
    states: [
      "pending",
      "provisioning",
      "running.ready",
      "running.updating",
      "running.refused",
      "failed",
      "deleting.blocked",
      "deleting.releasing",
      "deleting.released",
    ],
    transitions: 28,
  },
  {
    machine: accessRequestMachine,
    events: observedEach(
      everyCombination<AccessFacts>({
        deleting: bools,
        hasFinalizer: bools,
        clusterReachable: bools,
        targetFailing: bools,
        denial: [undefined, "conflict"],
        accessInPlace: bools,
        accessGone: bools,
        secretValid: bools,
        missingRoles: [[]],
      }),
    ),
    states: ["pending", "provisioning", "granted", "denied", "deleting.revoking", "deleting.released"],
    transitions: 15,
  },
  {
    machine: clusterRequestMachine,
    events: observedEach(
      everyCombination<ClusterRequestFacts>({
        deleting: bools,
        decision: ["place", "replace", "wait", "deny", "misconfigured"],
        held: bools,
        holdsNothing: bools,
        clusterDeletionDone: bools,
      }),
    ),
    // `deleting.checking` only decides where to go (its eventless transitions always leave it).
    states: [
      "pending",
      "scheduling",
      "granted",
      "replacing",
      "misconfigured",
      "denied",
      "deleting.releasing",
      "deleting.waitingForCluster",
      "deleting.released",
    ],
    transitions: 25,
  },
  {
    machine: hibernationScheduleMachine,
    // Its guards read whether it parses, whether an event is due, and the applied event against the latest;
    // the rest (the names, the next event) only fills in what it writes.
    events: observedEach(
      everyCombination<ScheduleFacts>({
        problems: [[], ["schedules[0].start: not a cron"]],
        due: bools,
        latest: [undefined, LATEST],
        applied: [undefined, { ...LATEST, clusters: ["a"] }, { ...LATEST, action: "wake", clusters: ["a"] }],
        selected: [["a"]],
      }),
    ),
    states: ["scheduled", "applying", "invalid"],
    transitions: 6,
  },
  {
    machine: clusterSnapshotMachine,
    events: observedEach(
      everyCombination<SnapshotFacts>({
        cluster: [
          { found: false },
          { found: true, uid: "u", ready: false },
          { found: true, uid: "u", ready: true },
          { found: true, uid: "u", ready: true, unsupported: "its backend existing takes no snapshots" },
        ],
        taken: [undefined, SNAPSHOT_MANIFEST],
        recorded: bools,
        restoreRequested: [undefined, "r1"],
        restored: [undefined, { request: "r1", outcome: "Restored", message: "" }],
        deleting: bools,
        hasFinalizer: bools,
        removed: bools,
        usedBy: [[], ["clone"]],
      }),
    ),
    states: [
      "pending",
      "taking",
      "complete",
      "restoring",
      "failed",
      "deleting.held",
      "deleting.removing",
      "deleting.released",
    ],
    transitions: 9 + 16,
  },
  {
    machine: clusterSnapshotScheduleMachine,
    // Its guards read whether it is sound, whether a time due waits, what this engine made, and what is beyond keep.
    events: observedEach(
      everyCombination<SnapshotScheduleFacts>({
        problems: [[], ["keep: 0 must be a whole number of at least 1"]],
        latest: [undefined, "2026-11-28T10:00:00Z"],
        due: bools,
        created: [undefined, { slot: "2026-11-28T10:00:00Z", clusters: ["a"] }],
        selected: [["a"]],
        expired: [[], ["old"]],
      }),
    ),
    states: ["scheduled", "taking", "pruning", "invalid"],
    transitions: 10,
  },
  {
    machine: rolloutMachine,
    // Its guards read the spec's switches and, of the progress, whether there is something to change, a failure,
    // and whether every target is finished; a settings run whether its config holds them, and bad input; which
    // Clusters and why only fill in what it writes.
    events: observedEach(
      everyCombination<RolloutFacts>({
        startable: bools,
        paused: bools,
        aborted: bools,
        progress: [
          { changes: [], complete: false },
          { changes: [{ name: "a", uid: "u", resourceVersion: "1", generation: 1 }], complete: false },
          { changes: [], complete: true },
          { changes: [], complete: false, failure: { name: "a", timedOut: false, message: "failed" } },
        ],
        snapshotsWanted: [undefined, ["a"]],
        // A settings run: its config given the new settings or not yet (absent: a version run); bad input.
        settingsApplied: [undefined, false, true],
        problem: [undefined, { reason: "ProviderConfigNotFound", message: "" }],
      }),
    ),
    states: ["pending", "progressing", "paused", "applying", "halted", "succeeded", "aborted"],
    transitions: 15,
  },
];

describe("every machine's statechart", () => {
  it.each(machines.map((entry) => [entry.machine.id, entry] as const))(
    "%s: reaches every state from its initial one and takes every transition on a generated path plus one event",
    (_, { machine, events, states, transitions }) => {
      const taken = expectEveryTransitionTaken(machine, events);
      expect(taken.states).toEqual([...states].sort());
      expect(taken.transitions).toBeGreaterThan(transitions);
    },
  );
});
