/** The ClusterSnapshotSchedule kind (engine.openmcp.cloud/v1alpha1): ClusterSnapshots of selected Clusters every so often, the last few kept. */

import type { ClusterScheduleStatus } from "./cluster-schedule.ts";
import type { ClusterSelection } from "./cluster-selection.ts";
import type { SnapshotStorage } from "./cluster-snapshot.ts";
import type { TypedObject } from "./common.ts";
import type { SNAPSHOT_SCHEDULE_API_VERSION } from "./constants/cluster-snapshot-schedule.ts";

/** How often, how many to keep, where, and which Clusters of the namespace (selector, profiles, purposes, ANDed). */
export interface ClusterSnapshotScheduleSpec extends ClusterSelection {
  /**
   * A Go-style duration (`6h`, `90m`, `1h30m`; at least `1m`): a snapshot is due at the schedule's creation and every
   * `every` after it.
   */
  readonly every: string;
  /** How many snapshots of each Cluster are kept (at least 1): the newest complete ones (and the newest, whatever it is). */
  readonly keep: number;
  /** Where the snapshots go: as a ClusterSnapshot's `spec.storage`. */
  readonly storage?: SnapshotStorage;
}

/** What the schedule took last and takes next. */
export interface ClusterSnapshotScheduleStatus extends ClusterScheduleStatus {
  /** The last time due for which snapshots were made (RFC 3339); a later one due is taken at once. */
  readonly lastScheduled?: string;
  /** The next time due (RFC 3339). */
  readonly nextScheduled?: string;
}

/** A snapshot schedule: namespaced, it selects Clusters of its own namespace. */
export interface ClusterSnapshotSchedule
  extends TypedObject<typeof SNAPSHOT_SCHEDULE_API_VERSION, "ClusterSnapshotSchedule"> {
  readonly spec: ClusterSnapshotScheduleSpec;
  readonly status?: ClusterSnapshotScheduleStatus;
}
