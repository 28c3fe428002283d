/** The HibernationSchedule's pure step, on the engine's generic step: only what is the kind's own. */
import type { Cluster } from "../../api/cluster.ts";
import {
  APPLY_FAILED_REASON,
  HIBERNATION_SCHEDULE_REASONS,
} from "../../api/constants/hibernation-schedule.ts";
import type { HibernationSchedule, ScheduleAction, ScheduledEvent } from "../../api/hibernation-schedule.ts";
import { type ScheduleStepBasics, scheduleStatus, untilNextTimeDue } from "../shared/cluster-schedule.ts";
import { selectedNames } from "../shared/cluster-selection.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { namesShown } from "../shared/names-shown.ts";
import { rfc3339 } from "../shared/rfc3339.ts";
import { storedStateStep } from "../shared/stored-state.ts";
import { hibernationScheduleMachine, type ScheduleFacts } from "./machine.ts";
import { timetableAt, timetableProblems } from "./timetable.ts";

/** The schedule kind's finalizer: never set (a schedule leaves nothing behind), named for the generic step. */
export const SCHEDULE_FINALIZER = "engine.openmcp.cloud/hibernation-schedule";

/** What the runtime does for a schedule: write the hibernate annotation for `action` on these Clusters. */
export interface AnnotateCommand {
  readonly kind: "annotate";
  readonly action: ScheduleAction;
  readonly time: string;
  readonly clusters: readonly string[];
}

/** What one step is given: the schedule, the Clusters of its namespace, what this engine last wrote, and `nowMs`. */
export interface ScheduleStepInput extends ScheduleStepBasics {
  readonly object: HibernationSchedule;
  readonly clusters: readonly Cluster[];
  /** The event this engine last wrote on the schedule's Clusters (kept in memory until the status records it). */
  readonly written?: ScheduledEvent & { readonly clusters: readonly string[] };
}

/** The time of an event in ms (an unreadable time counts as never). */
const msOf = (event: ScheduledEvent | undefined): number =>
  event ? Date.parse(event.time) || Number.NEGATIVE_INFINITY : Number.NEGATIVE_INFINITY;

const sameEvent = (a: ScheduledEvent | undefined, b: ScheduledEvent | undefined): boolean =>
  a !== undefined && b !== undefined && a.time === b.time && a.action === b.action;

/** Whether `latest` still has to be applied over what was applied (`recorded`): newer, or the same instant another action. */
function isNewer(latest: ScheduledEvent | undefined, recorded: ScheduledEvent | undefined): boolean {
  if (!latest) return false;
  if (!recorded) return true;
  const [a, b] = [msOf(latest), msOf(recorded)];
  return a > b || (a === b && latest.action !== recorded.action);
}

/** The facts of one look, from the input alone. */
export function scheduleFacts(input: ScheduleStepInput): ScheduleFacts {
  const { object, nowMs } = input;
  const entries = object.spec?.schedules ?? [];
  const problems = timetableProblems(entries);
  const at = problems.length === 0 ? timetableAt(entries, nowMs) : {};
  const latest = at.latest ? { action: at.latest.action, time: rfc3339(at.latest.atMs) } : undefined;
  const next = at.next ? { action: at.next.action, time: rfc3339(at.next.atMs) } : undefined;
  const applied = sameEvent(input.written, latest) ? input.written : undefined;
  const recorded = object.status?.lastApplied;
  return {
    problems,
    ...(latest ? { latest } : {}),
    ...(next ? { next, nextAtMs: at.next?.atMs } : {}),
    selected: selectedNames(object.spec, object.metadata.namespace ?? "", input.clusters),
    due: isNewer(latest, recorded) && applied === undefined,
    ...(applied ? { applied } : {}),
  };
}

/** The Event of one applied event: "put 3 Clusters to sleep: a, b, c". */
export function appliedEvent(
  applied: ScheduledEvent & { readonly clusters: readonly string[] },
): EventRecord {
  const count = `${applied.clusters.length} Cluster${applied.clusters.length === 1 ? "" : "s"}`;
  const names = applied.clusters.length > 0 ? `: ${namesShown(applied.clusters)}` : "";
  return applied.action === "sleep"
    ? {
        type: "Normal",
        reason: HIBERNATION_SCHEDULE_REASONS.PutToSleep,
        message: `put ${count} to sleep${names} (event of ${applied.time})`,
      }
    : {
        type: "Normal",
        reason: HIBERNATION_SCHEDULE_REASONS.WokenUp,
        message: `woke ${count}${names} (event of ${applied.time})`,
      };
}

/** One step of a schedule: the generic step with the kind's own parts. */
export const stepHibernationSchedule = storedStateStep<ScheduleStepInput, ScheduleFacts, AnnotateCommand>({
  machine: hibernationScheduleMachine,
  facts: scheduleFacts,
  finalizer: SCHEDULE_FINALIZER,
  actions: {
    writeAnnotations: (_, { facts }) =>
      facts.latest
        ? { kind: "annotate", action: facts.latest.action, time: facts.latest.time, clusters: facts.selected }
        : undefined,
  },
  event: (record, { facts }) => (facts.applied ? appliedEvent(facts.applied) : record),
  status: (transitioned) => {
    const { input, facts } = transitioned;
    const recorded = input.object.status?.lastApplied;
    const lastApplied =
      facts.applied && isNewer(facts.applied, recorded)
        ? { action: facts.applied.action, time: facts.applied.time }
        : recorded;
    return scheduleStatus(transitioned, {
      reasons: {
        scheduled: HIBERNATION_SCHEDULE_REASONS.Scheduled,
        invalid: HIBERNATION_SCHEDULE_REASONS.InvalidSchedule,
        failed: APPLY_FAILED_REASON,
      },
      scheduledMessage: "every entry parses; status.nextEvent is the next event",
      nextField: "nextEvent",
      times: { ...(lastApplied ? { lastApplied } : {}), ...(facts.next ? { nextEvent: facts.next } : {}) },
    });
  },
  atRest: ({ input, facts }) => untilNextTimeDue(facts, input.nowMs),
});
