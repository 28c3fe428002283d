/** The pure reconcile step for a ClusterRequest: (request, what the scheduler sees, now) → next state, desired object, commands, Events. */
import { produce } from "immer";
import type { ClusterRequest, ClusterRequestStatus, RequestPhase } from "../../api/cluster-request.ts";
import type { ObjectReference } from "../../api/common.ts";
import {
  ANNOTATIONS,
  CONDITION_TYPES,
  FINALIZERS,
  LABELS,
  OPERATIONS,
  REASONS,
  REQUEST_PHASES,
} from "../../api/constants.ts";
import type { SchedulerConfig } from "../../api/scheduler-config.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { applyFinalizerWish, type FinalizerWish } from "../shared/finalizer.ts";
import { selectorMatches } from "../shared/label-selector.ts";
import type { EventRecord, MachineStep } from "../shared/machine-step.ts";
import { requeueDelay, taggedPhase } from "../shared/machine-tags.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { snapshotRestorer } from "../shared/snapshots.ts";
import { stateValueToString } from "../shared/state-value.ts";
import { claimedPrefix, servedRequests, serves } from "./cluster-claims.ts";
import { type ClusterRequestEvent, type ClusterRequestFacts, clusterRequestMachine } from "./machine.ts";
import { proposedPrefixCondition, proposedPrefixEvent } from "./prefix-condition.ts";
import {
  type Decision,
  earlierAssignment,
  type Placement,
  type SchedulingView,
  schedule,
} from "./schedule.ts";

const transition = pureTransition(clusterRequestMachine);
const restore = snapshotRestorer(clusterRequestMachine);

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
  | "grantedElsewhere";

/** Value of the {@link ANNOTATIONS.scheduler} marker this engine writes. */
export const SCHEDULER_MARKER = "openmcp-engine";

/**
 * Whether this engine's scheduler wrote the request's placement: its marker annotation, or (requests
 * granted before the marker existed) a grant of this very request.
 */
export function scheduledHere(
  metadata: Pick<ClusterRequest["metadata"], "annotations">,
  hasOwnGrant: boolean,
): boolean {
  return metadata.annotations?.[ANNOTATIONS.scheduler] === SCHEDULER_MARKER || hasOwnGrant;
}

/**
 * Flow: `openmcp.cloud/operation: ignore` → ignored; no configuration → unconfigured (no write at all,
 * even while the request is deleted: beside the openMCP operator its scheduler does everything); a
 * `status.cluster` this engine did not write → grantedElsewhere; being deleted with the scheduler's
 * finalizer → ours, so it can go; not matched by `selectors.requests` → notSelected; else ours.
 */
export function clusterRequestResponsibility(
  request: ClusterRequest,
  config: SchedulerConfig | undefined,
  hasOwnGrant: boolean,
): ClusterRequestResponsibility {
  if (request.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  if (!config) return "unconfigured";
  if (request.status?.cluster && !scheduledHere(request.metadata, hasOwnGrant)) return "grantedElsewhere";
  if (request.metadata.deletionTimestamp && request.metadata.finalizers?.includes(FINALIZERS.request))
    return "ours";
  if (!selectorMatches(config.selectors.requests, request.metadata.labels)) return "notSelected";
  return "ours";
}

/** How often to look again, by situation. */
export interface ClusterRequestTiming {
  /** While creating, claiming or releasing, or waiting for a Cluster to go. */
  readonly pollMs: number;
  /** While Denied (Clusters, profiles and Purposes wake requests; this is a safety net). */
  readonly retryMs: number;
  /** When Granted, to notice drift (a removed finalizer, a deleted grant). */
  readonly resyncMs: number;
}

/** Everything one step needs; all of it data. */
export interface ClusterRequestStepInput {
  readonly request: ClusterRequest;
  readonly view: SchedulingView;
  /** Message of the last failed command for this request, while its commands keep failing. */
  readonly lastError?: string;
  /** The current time (RFC 3339), only for lastTransitionTime of changed conditions. */
  readonly now: string;
  readonly timing: ClusterRequestTiming;
}

/** What the runtime must do after a step. */
export interface ClusterRequestStepResult
  extends MachineStep<ClusterRequest["metadata"], ClusterRequestStatus, ClusterRequestCommand> {
  readonly event: ClusterRequestEvent;
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
  const reason = request.status?.conditions?.find((c) => c.type === CONDITION_TYPES.clusterGranted)?.reason;
  if (reason === REASONS.ConfigurationProblem) return "misconfigured";
  if (reason === REASONS.Replacing) return "replacing";
  return request.metadata.finalizers?.includes(FINALIZERS.request) ? "scheduling" : "pending";
}

/**
 * Flow: decide (schedule) → facts → one `observed` event through the machine → its actions as commands,
 * Events and the finalizer wish → the desired metadata and status.
 *
 * Guarantees: pure and deterministic; a second step on an unchanged world desires the request as it is;
 * the request's finalizer is added in the step that first creates or claims a Cluster, and removed only
 * when no Cluster holds anything for it and its grant is gone (and, with waitForClusterDeletion, its
 * Cluster is gone); status.cluster, once set, never changes.
 */
export function stepClusterRequest(input: ClusterRequestStepInput): ClusterRequestStepResult {
  const { request, view } = input;
  const decision = schedule(request, view);
  const facts = clusterRequestFacts(request, view, decision);
  const previousState = clusterRequestStateOf(request);
  const event: ClusterRequestEvent = { type: "observed", facts };
  const [snapshot, actions] = transition(restore(previousState), event);
  const state = stateValueToString(snapshot.value);

  let finalizer: FinalizerWish;
  const commands: ClusterRequestCommand[] = [];
  const events: EventRecord[] = [];
  for (const action of actions) {
    switch (action.type) {
      case "addFinalizer":
        finalizer = "add";
        break;
      case "removeFinalizer":
        finalizer = "remove";
        break;
      case "assign":
        if (decision.kind === "place") commands.push({ kind: "assign", placement: decision.placement });
        break;
      case "letGo":
        if (decision.kind === "replace") commands.push({ kind: "letGo", cluster: refOf(decision.cluster) });
        break;
      case "release":
        commands.push({ kind: "release", clusters: holding(request, view).map(refOf) });
        break;
      case "recordEvent":
        events.push(withDetail(action.params as EventRecord, decision));
        break;
    }
  }
  const prefixEvent = proposedPrefixEvent(request, prefixConditionOf(request, decision, state));
  if (prefixEvent) events.push(prefixEvent);
  const metadata = produce(request.metadata, (draft) => {
    applyFinalizerWish(draft, FINALIZERS.request, finalizer);
    // Marked before any status.cluster is written (metadata goes first), so the engine knows its own grants.
    if ((finalizer === "add" || state === "granted") && !scheduledHere(draft, false)) {
      draft.annotations ??= {};
      draft.annotations[ANNOTATIONS.scheduler] = SCHEDULER_MARKER;
    }
    if (draft.annotations?.[ANNOTATIONS.operation] === OPERATIONS.reconcile) {
      delete draft.annotations[ANNOTATIONS.operation]; // done: this reconcile is the one asked for
    }
  });
  return {
    previousState,
    state,
    event,
    decision,
    desired: { metadata, status: desiredStatus(input, decision, state, taggedPhase(snapshot)) },
    commands,
    events,
    requeueAfterMs: requeueDelay(snapshot, input.timing),
  };
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
  return others.length > 0 || cluster.metadata.labels?.[LABELS.deleteWithoutRequests] !== "true";
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
): ClusterRequestStatus {
  const { request } = input;
  const generation = request.metadata.generation ?? 0;
  const prefix = prefixConditionOf(request, decision, state);
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
  const type = CONDITION_TYPES.clusterGranted;
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
          reason: REASONS.WaitingForClusterDeletion,
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
    return { type, status, reason: REASONS[decision.reason], message: decision.message };
  if (decision.kind === "replace")
    return { type, status, reason: REASONS.Replacing, message: decision.message };
  if (decision.kind === "wait")
    return { type, status, reason: REASONS.WaitingForCluster, message: decision.message };
  if (input.lastError !== undefined)
    return { type, status, reason: REASONS.BackendError, message: input.lastError };
  const { cluster, created } = decision.placement;
  const where = `${cluster.metadata.namespace}/${cluster.metadata.name ?? cluster.metadata.generateName}`;
  return {
    type,
    status,
    reason: REASONS.Scheduling,
    message: created ? `creating Cluster ${where}` : `claiming Cluster ${where}`,
  };
}
