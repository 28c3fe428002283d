/** Constants of the ClusterSnapshotSchedule kind (engine.openmcp.cloud/v1alpha1): resource, labels, conditions, reasons. */
import { ENGINE_API_VERSION, engineResource } from "../constants.ts";

/** The kind's name. */
export const SNAPSHOT_SCHEDULE_KIND = "ClusterSnapshotSchedule";

/** `apiVersion` of a ClusterSnapshotSchedule (the engine's own group). */
export const SNAPSHOT_SCHEDULE_API_VERSION = ENGINE_API_VERSION;

/** Where ClusterSnapshotSchedules are served: namespaced, selecting Clusters of their own namespace. */
export const SNAPSHOT_SCHEDULE_RESOURCE = engineResource("clustersnapshotschedules", true);

/** On each ClusterSnapshot a schedule made: the schedule's name. */
export const SCHEDULE_LABEL = "engine.openmcp.cloud/snapshot-schedule";

/** On each ClusterSnapshot a schedule made: the time it was due (RFC 3339); the newest by it are kept. */
export const SCHEDULED_AT_ANNOTATION = "engine.openmcp.cloud/scheduled-at";

/** The shortest `every` a schedule takes (CEL refuses shorter ones; the step shows them too). */
export const MIN_SNAPSHOT_INTERVAL_MS = 60_000;

/** Reasons of the schedule's Ready condition and of its Events. */
export const SNAPSHOT_SCHEDULE_REASONS = {
  /** Ready: `every` and `keep` are sound; snapshots are taken at each time due. */
  Scheduled: "Scheduled",
  /** Ready=False: `every` does not parse, is shorter than a minute, or `keep` is below 1 (the message says which). */
  InvalidSchedule: "InvalidSchedule",
  /** Ready=False while making the snapshots or deleting the old ones fails (retried). */
  ScheduleFailed: "ScheduleFailed",
  /** Event: ClusterSnapshots of the selected Clusters were made for a time due. */
  SnapshotsCreated: "SnapshotsCreated",
  /** Event: ClusterSnapshots beyond `keep` were deleted (their data with them). */
  SnapshotsPruned: "SnapshotsPruned",
} as const;
