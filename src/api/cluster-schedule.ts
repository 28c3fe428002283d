/** The status every schedule over selected Clusters (HibernationSchedule, ClusterSnapshotSchedule) has. */
import type { StoredStateStatus } from "./common.ts";

/**
 * What a schedule's status always holds; each kind adds its record of the last and next times due. Its condition:
 * `Ready`, True `Scheduled`; False when the spec has a problem or acting on the Clusters failed, saying why.
 */
export interface ClusterScheduleStatus extends StoredStateStatus {
  /** How many Clusters the schedule selects now (those being deleted not counted). */
  readonly selected?: number;
}
