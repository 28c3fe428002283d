/**
 * The pure reconcile step for a ClusterRequest, on the generic step: (request, what the scheduler sees,
 * now) → the scheduler's decision, next state, desired object, commands, Events.
 */
import type { ClusterRequest, ClusterRequestStatus, RequestPhase } from "../../api/cluster-request.ts";
import type { ObjectReference } from "../../api/common.ts";
import {
  CLUSTER_REQUEST_ANNOTATIONS,
  CLUSTER_REQUEST_CONDITION_TYPES,
  CLUSTER_REQUEST_FINALIZERS,
  CLUSTER_REQUEST_LABELS,
  CLUSTER_REQUEST_REASONS,
} from "../../api/constants/cluster-request.ts";
import { ANNOTATIONS, OPERATIONS, REASONS, REQUEST_PHASES } from "../../api/constants.ts";
import type { SchedulerConfig } from "../../api/scheduler-config.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { type KindStep, kindStep, type StepBasics } from "../shared/kind-step.ts";
import { selectorMatches } from "../shared/label-selector.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import { claimedPrefix, servedRequests, serves } from "./cluster-claims.ts";
import { type ClusterRequestFacts, clusterRequestMachine } from "./machine.ts";
import { proposedPrefixCondition, proposedPrefixEvent } from "./prefix-condition.ts";
import {
  type Decision,
  earlierAssignment,
  type Placement,
  type SchedulingView,
  schedule,
} from "./schedule.ts";

/** What the runtime must do besides writing the request. Each is idempotent. */
export type ClusterRequestCommand =
  /** Create or claim the placement's Cluster (finalizer, prefix, copied metadata; tenancy re-checked on the fresh Cluster), then write the grant. */
  | { readonly kind: "assign"; readonly placement: Placement }
  /** Remove this request's finalizer and claim from a Cluster someone is deleting; never delete it. */
  | { readonly kind: "letGo"; readonly cluster: ObjectReference }
  /** Deletion: let go of these Clusters (deleting each marked delete-without-requests that nobody else holds) and delete the grant. */
  | { readonly kind: "release"; readonly clusters: readonly ObjectReference[] };

/** Whether the scheduler acts on a request at all. */
export type ClusterRequestResponsibility =
  | "ours"
  | "ignored"
  | "notSelected"
  /** The engine has no scheduler configuration: another scheduler (the openMCP operator's) serves requests. */
  | "unconfigured"
  /** `status.cluster` was written by another scheduler: never overwritten. */
  | "grantedElsewhere"
  /** Its purpose is one the configuration leaves to another scheduler (`purposesServedElsewhere`), and this engine never held it. */
  | "servedElsewhere";

/** Value of the {@link CLUSTER_REQUEST_ANNOTATIONS.scheduler} marker this engine writes. */
export const SCHEDULER_MARKER = "openmcp-engine";

/**
 * Whether this engine's scheduler wrote the request's placement: its marker annotation, or (requests
 * granted before the marker existed) a grant of this very request.
 */
export function scheduledHere(
  metadata: Pick<ClusterRequest["metadata"], "annotations">,
  hasOwnGrant: boolean,
): boolean {
  return metadata.annotations?.[CLUSTER_REQUEST_ANNOTATIONS.scheduler] === SCHEDULER_MARKER || hasOwnGrant;
}

/**
 * Flow: `openmcp.cloud/operation: ignore` → ignored; no configuration → unconfigured (no write at all,
 * even while the request is deleted: beside the openMCP operator its scheduler does everything); a
 * `status.cluster` this engine did not write → grantedElsewhere; a purpose served elsewhere that this
 * engine never marked → servedElsewhere (before anyone granted it too: no Pending, no finalizer, no
 * Event); being deleted with the scheduler's finalizer → ours, so it can go; not matched by
 * `selectors.requests` → notSelected; else ours.
 */
export function clusterRequestResponsibility(
  request: ClusterRequest,
  config: SchedulerConfig | undefined,
  hasOwnGrant: boolean,
): ClusterRequestResponsibility {
  if (request.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  if (!config) return "unconfigured";
  const here = scheduledHere(request.metadata, hasOwnGrant);
  if (request.status?.cluster && !here) return "grantedElsewhere";
  // The finalizer proves nothing here: openMCP's own scheduler adds the very same one.
  if (!here && config.purposesServedElsewhere?.includes(request.spec.purpose)) return "servedElsewhere";
  if (
    request.metadata.deletionTimestamp &&
    request.metadata.finalizers?.includes(CLUSTER_REQUEST_FINALIZERS.request)
  )
    return "ours";
  if (!selectorMatches(config.selectors.requests, request.metadata.labels)) return "notSelected";
  return "ours";
}

/**
 * How often to look again: while creating, claiming or releasing, or waiting for a Cluster to go (poll);
 * while Denied (retry: Clusters, profiles and Purposes wake requests, this is a safety net); when
 * Granted, to notice drift such as a removed finalizer or a deleted grant (resync).
 */
export type ClusterRequestTiming = RequeueTiming;

/** Everything one step needs; all of it data. */
export interface ClusterRequestStepInput extends StepBasics {
  readonly request: ClusterRequest;
  readonly view: SchedulingView;
  readonly timing: ClusterRequestTiming;
}

/** What the runtime must do after a step, and the scheduler's decision it followed. */
export interface ClusterRequestStepResult
  extends KindStep<ClusterRequest, ClusterRequestStatus, ClusterRequestCommand, ClusterRequestFacts> {
  readonly decision: Decision;
}

/** The step's input with the scheduler's decision, made once before the machine runs. */
interface DecidedInput extends ClusterRequestStepInput {
  readonly decision: Decision;
}

/**
 * openMCP's ClusterRequest has no field for the machine state, so it is read back from what the object
 * shows: deletion, phase, the condition's reason and the scheduler's finalizer.
 */
export function clusterRequestStateOf(request: ClusterRequest): string {
  if (request.metadata.deletionTimestamp) return "deleting.releasing";
  const phase = request.status?.phase;
  if (phase === REQUEST_PHASES.granted) return "granted";
  if (phase === REQUEST_PHASES.denied) return "denied";
  const reason = request.status?.conditions?.find(
    (c) => c.type === CLUSTER_REQUEST_CONDITION_TYPES.clusterGranted,
  )?.reason;
  if (reason === REASONS.ConfigurationProblem) return "misconfigured";
  if (reason === CLUSTER_REQUEST_REASONS.Replacing) return "replacing";
  return request.metadata.finalizers?.includes(CLUSTER_REQUEST_FINALIZERS.request) ? "scheduling" : "pending";
}

const step = kindStep<{
  input: DecidedInput;
  object: ClusterRequest;
  facts: ClusterRequestFacts;
  command: ClusterRequestCommand;
  status: ClusterRequestStatus;
  derived: ConditionUpdate | undefined;
}>({
  machine: clusterRequestMachine,
  object: (input) => input.request,
  readState: clusterRequestStateOf,
  facts: ({ request, view, decision }) => clusterRequestFacts(request, view, decision),
  finalizer: CLUSTER_REQUEST_FINALIZERS.request,
  actions: {
    assign: (_, { input: { decision } }) =>
      decision.kind === "place" ? { kind: "assign", placement: decision.placement } : undefined,
    letGo: (_, { input: { decision } }) =>
      decision.kind === "replace" ? { kind: "letGo", cluster: refOf(decision.cluster) } : undefined,
    release: (_, { input }) => ({ kind: "release", clusters: holding(input.request, input.view).map(refOf) }),
  },
  event: (record, { input }) => withDetail(record, input.decision),
  derive: ({ input, state }) => prefixConditionOf(input.request, input.decision, state),
  metadata(draft, { finalizer, state }) {
    // Marked before any status.cluster is written (metadata goes first), so the engine knows its own grants.
    if ((finalizer === "add" || state === "granted") && !scheduledHere(draft, false)) {
      draft.annotations ??= {};
      draft.annotations[CLUSTER_REQUEST_ANNOTATIONS.scheduler] = SCHEDULER_MARKER;
    }
  },
  moreEvents: ({ input }, prefix) => {
    const event = proposedPrefixEvent(input.request, prefix);
    return event ? [event] : [];
  },
  status: ({ input, state, phase }, prefix) => desiredStatus(input, input.decision, state, phase, prefix),
});

/**
 * Flow: decide (schedule) → facts → the generic step (the machine, its actions as commands, Events and
 * the finalizer wish, the desired metadata and status).
 *
 * Guarantees: pure and deterministic; a second step on an unchanged world desires the request as it is;
 * the request's finalizer is added in the step that first creates or claims a Cluster, and removed only
 * when no Cluster holds anything for it and its grant is gone (and, with waitForClusterDeletion, its
 * Cluster is gone); status.cluster, once set, never changes.
 */
export function stepClusterRequest(input: ClusterRequestStepInput): ClusterRequestStepResult {
  const decision = schedule(input.request, input.view);
  return { ...step({ ...input, decision }), decision };
}

/** The facts of the world, level-based. */
export function clusterRequestFacts(
  request: ClusterRequest,
  view: SchedulingView,
  decision: Decision,
): ClusterRequestFacts {
  return {
    deleting: request.metadata.deletionTimestamp !== undefined,
    decision: decision.kind,
    held: decision.kind === "place" && decision.placement.held,
    holdsNothing: holding(request, view).length === 0 && view.grant === undefined,
    clusterDeletionDone: clusterDeletionDone(request, view),
  };
}

/** Clusters that carry this request's finalizer or prefix claim. */
function holding(request: ClusterRequest, view: SchedulingView) {
  const uid = request.metadata.uid ?? "";
  return view.clusters.filter((cluster) => serves(cluster, uid) || claimedPrefix(cluster, uid) !== undefined);
}

/**
 * With waitForClusterDeletion, done once the request's Cluster is gone, or when it stays because another
 * request holds it or it is not marked delete-without-requests; without it, at once.
 */
function clusterDeletionDone(request: ClusterRequest, view: SchedulingView): boolean {
  if (request.spec.waitForClusterDeletion !== true) return true;
  const ref = earlierAssignment(request, view);
  if (!ref) return true;
  const cluster = view.clusters.find(
    (c) => c.metadata.namespace === ref.namespace && c.metadata.name === ref.name,
  );
  if (!cluster) return true;
  if (cluster.metadata.deletionTimestamp) return false;
  const uid = request.metadata.uid ?? "";
  const others = servedRequests(cluster).filter((other) => other !== uid);
  return (
    others.length > 0 || cluster.metadata.labels?.[CLUSTER_REQUEST_LABELS.deleteWithoutRequests] !== "true"
  );
}

function refOf(cluster: {
  readonly metadata: { readonly name?: string; readonly namespace?: string };
}): ObjectReference {
  return { name: cluster.metadata.name ?? "", namespace: cluster.metadata.namespace ?? "" };
}

function withDetail(params: EventRecord, decision: Decision): EventRecord {
  if (params.reason === "Granted" && decision.kind === "place") {
    const { cluster, prefix } = decision.placement;
    const where = `${cluster.metadata.namespace}/${cluster.metadata.name ?? cluster.metadata.generateName}`;
    return { ...params, message: `Cluster ${where} granted${prefix ? ` with prefix ${prefix}` : ""}` };
  }
  if ((params.reason === "Denied" || params.reason === "ConfigurationProblem") && "message" in decision) {
    return { ...params, message: decision.message };
  }
  return params;
}

/** The ProposedPrefix condition, once the request holds its place (the prefix is final then). */
function prefixConditionOf(request: ClusterRequest, decision: Decision, state: string) {
  return state === "granted" && decision.kind === "place"
    ? proposedPrefixCondition(request, decision.placement)
    : undefined;
}

function desiredStatus(
  input: ClusterRequestStepInput,
  decision: Decision,
  state: string,
  phaseTag: string | undefined,
  prefix: ConditionUpdate | undefined,
): ClusterRequestStatus {
  const { request } = input;
  const generation = request.metadata.generation ?? 0;
  const conditions = mergeConditions(
    request.status?.conditions,
    [grantedCondition(state, decision, input), ...(prefix ? [prefix] : [])],
    generation,
    input.now,
  );
  // The phase is the state's tag; deletion keeps the phase the request showed.
  const phase = (phaseTag as RequestPhase | undefined) ?? request.status?.phase ?? REQUEST_PHASES.pending;
  // status.cluster is set once, when first granted, and never changed (the CRD refuses changes).
  const granted =
    state === "granted" && decision.kind === "place" ? refOf(decision.placement.cluster) : undefined;
  const cluster = request.status?.cluster ?? granted;
  return {
    ...request.status,
    observedGeneration: generation,
    phase,
    conditions,
    ...(cluster ? { cluster } : {}),
  };
}

function grantedCondition(
  state: string,
  decision: Decision,
  input: ClusterRequestStepInput,
): ConditionUpdate {
  const type = CLUSTER_REQUEST_CONDITION_TYPES.clusterGranted;
  const status = "False" as const;
  if (state === "granted" && decision.kind === "place") {
    return {
      type,
      status: "True",
      reason: REASONS.Granted,
      message: withDetail({ type: "Normal", reason: "Granted", message: "" }, decision).message,
    };
  }
  if (state.startsWith("deleting")) {
    return state === "deleting.waitingForCluster"
      ? {
          type,
          status,
          reason: CLUSTER_REQUEST_REASONS.WaitingForClusterDeletion,
          message: "waiting for the Cluster to be deleted (waitForClusterDeletion)",
        }
      : {
          type,
          status,
          reason: REASONS.Deleting,
          message: "letting go of the Cluster and removing the grant",
        };
  }
  if (decision.kind === "misconfigured")
    return { type, status, reason: REASONS.ConfigurationProblem, message: decision.message };
  if (decision.kind === "deny")
    return { type, status, reason: CLUSTER_REQUEST_REASONS[decision.reason], message: decision.message };
  if (decision.kind === "replace")
    return { type, status, reason: CLUSTER_REQUEST_REASONS.Replacing, message: decision.message };
  if (decision.kind === "wait")
    return { type, status, reason: CLUSTER_REQUEST_REASONS.WaitingForCluster, message: decision.message };
  if (input.lastError !== undefined)
    return { type, status, reason: REASONS.BackendError, message: input.lastError };
  const { cluster, created } = decision.placement;
  const where = `${cluster.metadata.namespace}/${cluster.metadata.name ?? cluster.metadata.generateName}`;
  return {
    type,
    status,
    reason: CLUSTER_REQUEST_REASONS.Scheduling,
    message: created ? `creating Cluster ${where}` : `claiming Cluster ${where}`,
  };
}
