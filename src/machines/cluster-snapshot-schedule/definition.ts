/** The ClusterSnapshotSchedule kind as the engine registers it: resource, machine, statechart, guards in words. */
import type { ClusterSnapshotSchedule } from "../../api/cluster-snapshot-schedule.ts";
import {
  SNAPSHOT_SCHEDULE_KIND,
  SNAPSHOT_SCHEDULE_RESOURCE,
} from "../../api/constants/cluster-snapshot-schedule.ts";
import { conditionsInWords, type Explanation } from "../shared/explanation.ts";
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
  const status = schedule.status;
  const why = conditionsInWords(status?.conditions);
  if (status?.lastScheduled) why.push(`last taken: the snapshots due at ${status.lastScheduled}`);
  if (status?.selected !== undefined) why.push(`selects ${status.selected} Cluster(s)`);
  const waitingFor =
    status?.state === "invalid"
      ? ["a person to fix spec.every or spec.keep"]
      : status?.nextScheduled
        ? [`the next snapshots, due at ${status.nextScheduled}`]
        : [];
  return { state: status?.state, phase: status?.phase, why, waitingFor };
}
