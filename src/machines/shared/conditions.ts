/** Kubernetes conditions by the openMCP rules: never deleted, transition time only on change, phase from them. */
import type { Condition, ConditionStatus } from "../../api/common.ts";
import { CLUSTER_PHASES } from "../../api/constants.ts";

/** What a reconcile says about one condition type; times and generations are filled in by {@link mergeConditions}. */
export interface ConditionUpdate {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/**
 * Applies `updates` to `existing`: an updated condition keeps its place and its lastTransitionTime unless
 * its status changed; new types are appended; types not updated stay as they are (never deleted).
 * Returns `existing` values unchanged where nothing differs, so an idle reconcile writes nothing.
 */
export function mergeConditions(
  existing: readonly Condition[] | undefined,
  updates: readonly ConditionUpdate[],
  generation: number,
  now: string,
): Condition[] {
  const result = [...(existing ?? [])];
  for (const update of updates) {
    const index = result.findIndex((condition) => condition.type === update.type);
    const previous = index >= 0 ? result[index] : undefined;
    const next: Condition = {
      type: update.type,
      status: update.status,
      observedGeneration: generation,
      lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : now,
      reason: update.reason,
      message: update.message,
    };
    if (previous === undefined) result.push(next);
    else if (!sameCondition(previous, next)) result[index] = next;
  }
  return result;
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration &&
    a.lastTransitionTime === b.lastTransitionTime
  );
}

/**
 * The openMCP phase rule for Cluster-like objects on top of the phase the machine's state is tagged
 * with: Terminating as tagged; a state tagged Ready shows Ready only while all conditions are True
 * (a backend condition may say otherwise); anything else Progressing.
 */
export function clusterPhase(tagged: string | undefined, conditions: readonly Condition[]): string {
  if (tagged === CLUSTER_PHASES.terminating) return CLUSTER_PHASES.terminating;
  return tagged === CLUSTER_PHASES.ready &&
    conditions.length > 0 &&
    conditions.every((condition) => condition.status === "True")
    ? CLUSTER_PHASES.ready
    : CLUSTER_PHASES.progressing;
}

/** Why condition `type` of `status` is False; undefined while it holds, is Unknown or is absent. */
export function falseReason(
  status: { readonly conditions?: readonly Condition[] | undefined } | undefined,
  type: string,
): string | undefined {
  const condition = status?.conditions?.find((each) => each.type === type);
  return condition?.status === "False" ? condition.reason : undefined;
}
