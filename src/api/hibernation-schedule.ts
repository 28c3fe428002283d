/** The HibernationSchedule kind (engine.openmcp.cloud/v1alpha1): Clusters put to sleep and woken on a timetable. */

import type { ClusterScheduleStatus } from "./cluster-schedule.ts";
import type { ClusterSelection } from "./cluster-selection.ts";
import type { TypedObject } from "./common.ts";
import type { HIBERNATION_SCHEDULE_API_VERSION } from "./constants/hibernation-schedule.ts";

/** One timetable entry, the fields of Gardener's Shoot `spec.hibernation.schedules[]`. */
export interface ScheduleEntry {
  /** Cron (5 fields): when the selected Clusters go to sleep. */
  readonly start?: string;
  /** Cron (5 fields): when they wake. */
  readonly end?: string;
  /** IANA time zone the crons are read in; default UTC. */
  readonly location?: string;
}

/** What the schedule asks of a Cluster at one of its events. */
export type ScheduleAction = "sleep" | "wake";

/** One event of a schedule: the action and when (RFC 3339). */
export interface ScheduledEvent {
  readonly action: ScheduleAction;
  readonly time: string;
}

/** The timetable and which Clusters of the schedule's namespace it applies to (all ANDed). */
export interface HibernationScheduleSpec extends ClusterSelection {
  readonly schedules: readonly ScheduleEntry[];
}

/** What the schedule last did and does next. */
export interface HibernationScheduleStatus extends ClusterScheduleStatus {
  /** The last event written to the selected Clusters. */
  readonly lastApplied?: ScheduledEvent;
  /** The next event of the timetable. */
  readonly nextEvent?: ScheduledEvent;
}

/** A hibernation schedule: namespaced, it selects Clusters of its own namespace. */
export interface HibernationSchedule
  extends TypedObject<typeof HIBERNATION_SCHEDULE_API_VERSION, "HibernationSchedule"> {
  readonly spec: HibernationScheduleSpec;
  readonly status?: HibernationScheduleStatus;
}
