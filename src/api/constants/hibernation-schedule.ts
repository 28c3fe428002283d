/** Constants of the HibernationSchedule kind (engine.openmcp.cloud/v1alpha1): its resource, conditions and reasons. */
import { ENGINE_API_VERSION, engineResource } from "../constants.ts";

/** The kind's name. */
export const HIBERNATION_SCHEDULE_KIND = "HibernationSchedule";

/** `apiVersion` of a HibernationSchedule (the engine's own group, like ProviderConfig and ClusterPool). */
export const HIBERNATION_SCHEDULE_API_VERSION = ENGINE_API_VERSION;

/** Where HibernationSchedules are served: namespaced, selecting Clusters of their own namespace. */
export const HIBERNATION_SCHEDULE_RESOURCE = engineResource("hibernationschedules", true);

/** The time zone of a schedule entry without `location`. */
export const DEFAULT_SCHEDULE_LOCATION = "UTC";

/** Reasons of the schedule's Ready condition and of its Events. */
export const HIBERNATION_SCHEDULE_REASONS = {
  /** Every entry parses; the schedule is applied at its events. */
  Scheduled: "Scheduled",
  /** An entry's cron or time zone does not parse (the condition names the entry and the error). */
  InvalidSchedule: "InvalidSchedule",
  /** Event: the selected Clusters were asked to sleep. */
  PutToSleep: "PutToSleep",
  /** Event: the selected Clusters were asked to wake. */
  WokenUp: "WokenUp",
} as const;

/** Reason of Ready=False while writing the annotation on the selected Clusters fails (retried). */
export const APPLY_FAILED_REASON = "ApplyFailed";
