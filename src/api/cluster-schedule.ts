/** The status every schedule over selected Clusters (HibernationSchedule, ClusterSnapshotSchedule) has. */
import type { Condition } from "./common.ts";

/** What a schedule's status always holds; each kind adds its record of the last and next times due. */
export interface ClusterScheduleStatus {
  readonly observedGeneration?: number;
  readonly phase?: string;
  /** The machine state, read back by the next step. */
  readonly state?: string;
  /** How many Clusters the schedule selects now (those being deleted not counted). */
  readonly selected?: number;
  /** `Ready`: True `Scheduled`; False when the spec has a problem or acting on the Clusters failed, saying why. */
  readonly conditions?: readonly Condition[];
}
