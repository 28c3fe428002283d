/** The HibernationSchedule kind as the engine registers it: resource, machine, statechart, guards in words. */
import {
  HIBERNATION_SCHEDULE_KIND,
  HIBERNATION_SCHEDULE_RESOURCE,
} from "../../api/constants/hibernation-schedule.ts";
import type { HibernationSchedule } from "../../api/hibernation-schedule.ts";
import { explainSchedule } from "../shared/cluster-schedule.ts";
import type { Explanation } from "../shared/explanation.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { hibernationScheduleMachine } from "./machine.ts";

/** The HibernationSchedule kind. */
export const HIBERNATION_SCHEDULE_DEFINITION = machineDefinition(HIBERNATION_SCHEDULE_KIND, {
  resource: HIBERNATION_SCHEDULE_RESOURCE,
  shortNames: ["hsched"],
  machine: hibernationScheduleMachine,
  guardPhrases: {
    isInvalid: "a cron or time zone of the timetable does not parse",
    isValid: "every cron and time zone of the timetable parses",
    isDue: "the latest event of the timetable is newer than the last applied one",
    isSettled: "no event is due",
    isApplied: "the latest event was written on every selected Cluster",
  },
});

/** A schedule explained from what it stores. */
export function explainHibernationSchedule(schedule: HibernationSchedule): Explanation {
  const { lastApplied, nextEvent } = schedule.status ?? {};
  return explainSchedule(schedule.status, {
    ...(lastApplied ? { last: `last applied: ${lastApplied.action} of ${lastApplied.time}` } : {}),
    ...(nextEvent ? { next: `the next event: ${nextEvent.action} at ${nextEvent.time}` } : {}),
    fix: "the timetable (spec.schedules)",
  });
}
