/** The HibernationSchedule kind as the engine registers it: resource, machine, statechart, guards in words. */
import {
  HIBERNATION_SCHEDULE_KIND,
  HIBERNATION_SCHEDULE_RESOURCE,
} from "../../api/constants/hibernation-schedule.ts";
import type { HibernationSchedule } from "../../api/hibernation-schedule.ts";
import { conditionsInWords, type Explanation } from "../shared/explanation.ts";
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
  const status = schedule.status;
  const why = conditionsInWords(status?.conditions);
  if (status?.lastApplied)
    why.push(`last applied: ${status.lastApplied.action} of ${status.lastApplied.time}`);
  if (status?.selected !== undefined) why.push(`selects ${status.selected} Cluster(s)`);
  const waitingFor =
    status?.state === "invalid"
      ? ["a person to fix the timetable (spec.schedules)"]
      : status?.nextEvent
        ? [`the next event: ${status.nextEvent.action} at ${status.nextEvent.time}`]
        : [];
  return { state: status?.state, phase: status?.phase, why, waitingFor };
}
