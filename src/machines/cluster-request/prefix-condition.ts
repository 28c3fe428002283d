/** The ProposedPrefix condition of a shared ClusterRequest: did it get the prefix it proposed, and if not, why. Pure. */
import type { ClusterRequest } from "../../api/cluster-request.ts";
import {
  CLUSTER_REQUEST_CONDITION_TYPES,
  CLUSTER_REQUEST_REASONS,
} from "../../api/constants/cluster-request.ts";
import type { ConditionUpdate } from "../shared/conditions.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { prefixesOfOthers } from "./cluster-claims.ts";
import { prefixesCollide, prefixProblem } from "./prefixes.ts";
import type { Placement } from "./schedule.ts";

/** Longest piece of a proposal quoted in a message: an annotation may be far longer than any prefix. */
const QUOTED = 40;

const quote = (text: string) => JSON.stringify(text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text);

/**
 * For a granted request that proposes a prefix: True when it holds the proposed one, else False with why
 * another was given (not usable, taken by another request on the Cluster, a different one granted
 * earlier) or why none was (an Exclusive Cluster). Undefined when nothing was proposed.
 */
export function proposedPrefixCondition(
  request: ClusterRequest,
  placement: Placement,
): ConditionUpdate | undefined {
  const proposed = placement.proposedPrefix;
  const granted = placement.prefix;
  const type = CLUSTER_REQUEST_CONDITION_TYPES.proposedPrefix;
  if (proposed === undefined) return undefined;
  if (!placement.shared) {
    return {
      type,
      status: "False",
      reason: CLUSTER_REQUEST_REASONS.PrefixNotUsed,
      message: `the proposed prefix ${quote(proposed)} is not used: the Cluster serves this request alone (Exclusive), where no prefix is granted`,
    };
  }
  if (granted === undefined) return undefined;
  if (proposed === granted) {
    return {
      type,
      status: "True",
      reason: CLUSTER_REQUEST_REASONS.PrefixAsProposed,
      message: `prefix ${quote(granted)} granted`,
    };
  }
  const instead = `; prefix ${quote(granted)} was granted instead`;
  const problem = prefixProblem(proposed);
  if (problem !== undefined) {
    return {
      type,
      status: "False",
      reason: CLUSTER_REQUEST_REASONS.InvalidPrefix,
      message: `the proposed prefix ${quote(proposed)} is not usable: ${problem}${instead}`,
    };
  }
  const cluster = placement.cluster.metadata;
  const holder = prefixesOfOthers(placement.cluster, request.metadata.uid ?? "").find((other) =>
    prefixesCollide(other, proposed),
  );
  if (holder !== undefined) {
    return {
      type,
      status: "False",
      reason: CLUSTER_REQUEST_REASONS.PrefixTaken,
      message: `the proposed prefix ${quote(proposed)} collides with ${quote(holder)}, held by another request on Cluster ${cluster.namespace}/${cluster.name}${instead}`,
    };
  }
  return {
    type,
    status: "False",
    reason: CLUSTER_REQUEST_REASONS.PrefixAlreadyGranted,
    message: `the proposed prefix ${quote(proposed)} was not granted when the request was placed (taken then, or proposed later), and a granted prefix never changes${instead}`,
  };
}

/** A Warning Event when the condition newly says the proposal was not granted (or says why differently). */
export function proposedPrefixEvent(
  request: ClusterRequest,
  update: ConditionUpdate | undefined,
): EventRecord | undefined {
  if (update === undefined || update.status === "True") return undefined;
  const before = request.status?.conditions?.find((condition) => condition.type === update.type);
  if (
    before?.status === update.status &&
    before.reason === update.reason &&
    before.message === update.message
  )
    return undefined;
  return { type: "Warning", reason: update.reason, message: update.message };
}
