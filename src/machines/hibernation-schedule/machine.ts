/** The HibernationSchedule statechart: scheduled ⇄ applying, invalid. Pure: no I/O, no clock (now is a fact). */
import { setup } from "xstate";
import type { ScheduledEvent } from "../../api/hibernation-schedule.ts";
import { actionsAsData } from "../shared/actions-as-data.ts";
import { type ClusterScheduleFacts, scheduleGuards } from "../shared/cluster-schedule.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";
import {
  actingScheduleState,
  invalidScheduleState,
  restingScheduleState,
} from "../shared/schedule-states.ts";

/** What one look at a schedule knows, level-based: the schedule's facts, and its events. */
export interface ScheduleFacts extends ClusterScheduleFacts {
  /** The latest event at or before now (absent: none yet). */
  readonly latest?: ScheduledEvent;
  /** The next event after now (absent: none). */
  readonly next?: ScheduledEvent;
  /** This engine wrote the latest event on the selected Clusters (the names written), in this reconcile or before. */
  readonly applied?: ScheduledEvent & { readonly clusters: readonly string[] };
}

/** The one event: "here is what the world looks like now". */
export type ScheduleEvent = ObservedEvent<ScheduleFacts>;

/** The Event recorded once an event was written; the step fills in the action and the names. */
const APPLIED_EVENT: EventRecord = { type: "Normal", reason: "Applied", message: "" };

/** This engine already wrote the latest event (the applied one is it). */
const appliedLatest = (facts: ScheduleFacts) =>
  facts.applied !== undefined &&
  facts.latest !== undefined &&
  facts.applied.time === facts.latest.time &&
  facts.applied.action === facts.latest.action;

/** The machine: named guards and actions, then the chart. */
export const hibernationScheduleMachine = setup({
  types: observedMachineTypes<ScheduleFacts>(),
  guards: {
    ...scheduleGuards(appliedLatest),
    isApplied: whenObserved(appliedLatest),
  },
  actions: actionsAsData("writeAnnotations"),
}).createMachine({
  id: "hibernationSchedule",
  context: {},
  initial: "scheduled",
  states: {
    scheduled: restingScheduleState(
      "At rest: the latest event of the timetable is applied (or there is none yet); looks again at the next event.",
      "applying",
    ),
    applying: actingScheduleState({
      state: "applying",
      description:
        "An event newer than the last applied one: the hibernate annotation is written on every selected Cluster.",
      phase: "Applying",
      action: "writeAnnotations",
      acted: "isApplied",
      event: APPLIED_EVENT,
    }),
    invalid: invalidScheduleState(
      "A cron or time zone of the timetable does not parse: nothing is applied until it is fixed.",
    ),
  },
});
