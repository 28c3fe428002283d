/** The ClusterSnapshotSchedule kind as the engine registers it: resource, machine, statechart, guards in words. */
import type { ClusterSnapshotSchedule } from "../../api/cluster-snapshot-schedule.ts";
import {
  SNAPSHOT_SCHEDULE_KIND,
  SNAPSHOT_SCHEDULE_RESOURCE,
} from "../../api/constants/cluster-snapshot-schedule.ts";
import { explainSchedule } from "../shared/cluster-schedule.ts";
import type { Explanation } from "../shared/explanation.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { clusterSnapshotScheduleMachine } from "./machine.ts";

/** The ClusterSnapshotSchedule kind. */
export const SNAPSHOT_SCHEDULE_DEFINITION = machineDefinition(SNAPSHOT_SCHEDULE_KIND, {
  resource: SNAPSHOT_SCHEDULE_RESOURCE,
  shortNames: ["csnapsched"],
  machine: clusterSnapshotScheduleMachine,
  guardPhrases: {
    isInvalid: "every does not parse or is shorter than 1m, or keep is below 1",
    isValid: "every and keep are sound",
    isDue: "a time due is newer than the last one whose snapshots were made",
    isSettled: "no time due is waiting",
    isCreated: "the snapshots of the latest time due were made",
    hasExpired: "a Cluster has snapshots of the schedule beyond keep",
    isPruned: "no Cluster has snapshots of the schedule beyond keep",
  },
});

/** A schedule explained from what it stores. */
export function explainClusterSnapshotSchedule(schedule: ClusterSnapshotSchedule): Explanation {
  const { lastScheduled, nextScheduled } = schedule.status ?? {};
  return explainSchedule(schedule.status, {
    ...(lastScheduled ? { last: `last taken: the snapshots due at ${lastScheduled}` } : {}),
    ...(nextScheduled ? { next: `the next snapshots, due at ${nextScheduled}` } : {}),
    fix: "spec.every or spec.keep",
  });
}
