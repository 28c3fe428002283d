/**
 * What every schedule over selected Clusters has in common (HibernationSchedule, ClusterSnapshotSchedule): at each
 * time due (and at once for the latest one missed) it acts on the Clusters of its namespace it selects. Each kind
 * brings what it does then; the facts, guards, Ready condition, status and requeue of the schedule are said here.
 */
import type { ClusterScheduleStatus } from "../../api/cluster-schedule.ts";
import { mergeConditions } from "./conditions.ts";
import { conditionsInWords, type Explanation } from "./explanation.ts";
import { type StepBasics, type StepObject, stepBasics, type Transitioned } from "./kind-step.ts";
import type { RequeueTiming } from "./machine-tags.ts";
import { whenObserved } from "./observed-guard.ts";

/** What every schedule's step is given besides its own inputs: the step basics, and now in ms (for times due). */
export interface ScheduleStepBasics extends StepBasics {
  readonly nowMs: number;
}

/** The {@link ScheduleStepBasics} of one look: its time (also in ms), the last error, the kind's timing. */
export function scheduleStepBasics(
  look: { readonly now: string; readonly nowMs: number; readonly lastError?: string | undefined },
  timing: RequeueTiming,
): ScheduleStepBasics {
  return { nowMs: look.nowMs, ...stepBasics(look, timing) };
}

/** What one look at any such schedule knows, level-based; a kind adds the times due of its own shape. */
export interface ClusterScheduleFacts {
  /** What is wrong with the schedule's spec, each naming its field or entry; empty: it is sound. */
  readonly problems: readonly string[];
  /** The next time due in ms since the epoch, for the requeue; absent: none. */
  readonly nextAtMs?: number;
  /** Names of the Clusters selected now (sorted; those being deleted left out). */
  readonly selected: readonly string[];
  /** The latest time due is newer than the one the status records, and this engine has not acted on it yet. */
  readonly due: boolean;
}

/**
 * The guards every schedule's chart has; `actedOnLatest`: this engine already acted on the latest time due
 * (in this reconcile or before), so it is never due again, whatever `due` says: acting ⇄ scheduled can then
 * never loop within one step.
 */
export function scheduleGuards<Facts extends ClusterScheduleFacts>(actedOnLatest: (facts: Facts) => boolean) {
  const when = whenObserved<Facts>;
  return {
    isInvalid: when((facts) => !isSound(facts)),
    isValid: when(isSound),
    isDue: when((facts) => isSound(facts) && facts.due && !actedOnLatest(facts)),
    isSettled: when((facts) => !facts.due),
  };
}

/** The schedule's spec is sound: it is acted on. */
export const isSound = (facts: ClusterScheduleFacts): boolean => facts.problems.length === 0;

/** The reasons of a schedule's Ready condition. */
export interface ScheduleReasons {
  /** True: the spec is sound, and the schedule is acted on at its times due. */
  readonly scheduled: string;
  /** False: the spec has problems (the message names them). */
  readonly invalid: string;
  /** False: acting on the Clusters failed (the message is the last error). */
  readonly failed: string;
}

/** A kind's own part of its schedule's status: its Ready condition's words and its record of times due. */
export interface ScheduleStatusParts<Times> {
  readonly reasons: ScheduleReasons;
  /** The True Ready condition's message: what the schedule does. */
  readonly scheduledMessage: string;
  /** The kind's record of the last time due acted on and of the next (absent fields: none). */
  readonly times: Times;
  /** The field of `times` the next time due stands in: dropped from the status when there is none. */
  readonly nextField: keyof Times & string;
}

/** What a schedule's step is given, as far as its status is concerned. */
type ScheduleInput = ScheduleStepBasics & {
  readonly object: StepObject & { readonly status?: ClusterScheduleStatus };
};

/** The status of a schedule after a step: the state, the times due, the count selected, and Ready. */
export function scheduleStatus<Times extends object>(
  {
    input: { object, now, lastError },
    facts,
    state,
    phase,
  }: Transitioned<ScheduleInput, ClusterScheduleFacts, unknown>,
  parts: ScheduleStatusParts<Times>,
) {
  const ready = !isSound(facts)
    ? { status: "False" as const, reason: parts.reasons.invalid, message: facts.problems.join("; ") }
    : lastError
      ? { status: "False" as const, reason: parts.reasons.failed, message: lastError }
      : { status: "True" as const, reason: parts.reasons.scheduled, message: parts.scheduledMessage };
  const { [parts.nextField]: _, ...rest } = object.status ?? {};
  return {
    ...rest,
    observedGeneration: object.metadata.generation ?? 0,
    ...(phase ? { phase } : {}),
    state,
    ...parts.times,
    selected: facts.selected.length,
    conditions: mergeConditions(
      object.status?.conditions,
      [{ type: "Ready", ...ready }],
      object.metadata.generation ?? 0,
      now,
    ),
  };
}

/** Requeues at the next time due a little after it, so it is at or before the next look's now. */
const AFTER_TIME_DUE_MS = 250;

/** How soon a schedule at rest looks again: just after its next time due (undefined: it has none). */
export function untilNextTimeDue(facts: ClusterScheduleFacts, nowMs: number): number | undefined {
  return facts.nextAtMs === undefined ? undefined : Math.max(0, facts.nextAtMs - nowMs) + AFTER_TIME_DUE_MS;
}

/** A schedule's own words for `explain`: what it did last and is due next, and what a person fixes when it is invalid. */
export interface ScheduleWords {
  /** What it did at the last time due acted on (absent: nothing yet). */
  readonly last?: string;
  /** What is due next (absent: nothing). */
  readonly next?: string;
  /** The spec fields that make it invalid. */
  readonly fix: string;
}

/** A schedule explained from what it stores: Ready, what it did last, how many Clusters it selects; what it waits for. */
export function explainSchedule(
  status: ClusterScheduleStatus | undefined,
  words: ScheduleWords,
): Explanation {
  const why = conditionsInWords(status?.conditions);
  if (words.last) why.push(words.last);
  if (status?.selected !== undefined) why.push(`selects ${status.selected} Cluster(s)`);
  const waitingFor =
    status?.state === "invalid" ? [`a person to fix ${words.fix}`] : words.next ? [words.next] : [];
  return { state: status?.state, phase: status?.phase, why, waitingFor };
}
