/**
 * The states every schedule over selected Clusters has in its chart (HibernationSchedule, ClusterSnapshotSchedule):
 * `scheduled` at rest, one state that acts on the Clusters at a time due, and `invalid`, on the guards of
 * `scheduleGuards` (cluster-schedule.ts). A kind brings the name and action of its acting state, the guard that
 * says it acted, and its words; each function returns the state's config as the chart would spell it out.
 */
import { recordEvent } from "./actions-as-data.ts";
import type { EventRecord } from "./machine-step.ts";
import { PHASE_TAG, REQUEUE } from "./machine-tags.ts";

/** A transition out of `scheduled` besides to invalid and to acting (e.g. to pruning). */
interface RestExit {
  readonly guard: string;
  readonly target: string;
}

/** `scheduled`: at rest until the spec turns invalid or a time due comes (then `acting`), or a kind's own exit. */
export function restingScheduleState<const Acting extends string, const More extends readonly RestExit[]>(
  description: string,
  acting: Acting,
  ...more: More
) {
  return {
    description,
    tags: [REQUEUE.resync, `${PHASE_TAG}Scheduled`],
    always: [
      { guard: "isInvalid" as const, target: "invalid" as const },
      { guard: "isDue" as const, target: acting },
      ...more,
    ],
  };
}

/** How a kind acts at a time due. */
export interface ScheduleActing<Acting extends string, Action extends string, Acted extends string> {
  /** The acting state's name. */
  readonly state: Acting;
  readonly description: string;
  /** The phase while acting (tagged `phase:<phase>`). */
  readonly phase: string;
  /** The kind's action that acts on the selected Clusters (idempotent: ordered again while still due). */
  readonly action: Action;
  /** The guard that says this engine acted on the latest time due; the step fills in `event` then. */
  readonly acted: Acted;
  readonly event: EventRecord;
}

/**
 * The acting state: the kind's action, ordered again while the time is still due; back to rest once it acted
 * (with its Event), or once nothing is due any more (the spec changed: nothing done).
 */
export function actingScheduleState<
  const Acting extends string,
  const Action extends string,
  const Acted extends string,
>(acting: ScheduleActing<Acting, Action, Acted>) {
  return {
    description: acting.description,
    tags: [REQUEUE.poll, `${PHASE_TAG}${acting.phase}`],
    entry: [acting.action],
    on: { observed: { guard: "isDue" as const, target: acting.state, reenter: true } },
    always: [
      { guard: "isInvalid" as const, target: "invalid" as const },
      { guard: acting.acted, target: "scheduled" as const, actions: [recordEvent(acting.event)] },
      { guard: "isSettled" as const, target: "scheduled" as const },
    ],
  };
}

/** `invalid`: nothing is done until the spec is sound again. */
export function invalidScheduleState(description: string) {
  return {
    description,
    tags: [REQUEUE.resync, `${PHASE_TAG}Invalid`],
    always: [{ guard: "isValid" as const, target: "scheduled" as const }],
  };
}
