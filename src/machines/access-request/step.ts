/** The pure reconcile step for an AccessRequest: (request, facts, now) → next state, patches, commands, Events. */
import { produce } from "immer";
import type { AnyMachineSnapshot } from "xstate";
import type { AccessRequest, AccessRequestStatus } from "../../api/access-request.ts";
import { CONDITION_TYPES, FINALIZERS, LABELS, REASONS, REQUEST_PHASES } from "../../api/constants.ts";
import type { EventParams } from "../cluster/machine.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { diff, type Json, type PatchOperation } from "../shared/json-patch.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { stateValueToString } from "../shared/state-value.ts";
import { type AccessEvent, type AccessFacts, accessRequestMachine } from "./machine.ts";

const transition = pureTransition(accessRequestMachine);

/** What the runtime must do on the target cluster. */
export type AccessCommand = "grantAccess" | "issueCredential" | "revokeAccess";

/** Whether this provider acts on an AccessRequest at all (the reference's responsibility rule). */
export type AccessResponsibility = "ours" | "notOurs" | "notPrepared" | "awaitingPreparation";

/**
 * Ours when both preparation labels are set and the provider label is ours, and the request is Pending,
 * or Granted/Denied for its current generation; "awaitingPreparation" when it is ours but was changed
 * after being granted (preparation sets it back to Pending first). Deletion is always ours while our
 * finalizer is on it.
 */
export function accessResponsibility(request: AccessRequest, providerName: string): AccessResponsibility {
  const labels = request.metadata.labels ?? {};
  const ourFinalizer = request.metadata.finalizers?.includes(FINALIZERS.accessRequest) ?? false;
  if (request.metadata.deletionTimestamp && ourFinalizer) return "ours";
  if (!labels[LABELS.provider] || !labels[LABELS.profile]) return "notPrepared";
  if (labels[LABELS.provider] !== providerName) return "notOurs";
  const phase = request.status?.phase;
  const current = request.status?.observedGeneration === request.metadata.generation;
  if (phase === REQUEST_PHASES.granted && !current) return "awaitingPreparation";
  return "ours";
}

/** Everything one step needs; all of it data. */
export interface AccessStepInput {
  readonly request: AccessRequest;
  readonly facts: AccessFacts;
  /** Name of the Secret that holds (or will hold) the kubeconfig, in the request's namespace. */
  readonly secretName: string;
  /** Why the Cluster is not reachable, for the condition (when facts.clusterReachable is false). */
  readonly clusterProblem?: string;
  /** The current time (RFC 3339), only for lastTransitionTime of changed conditions. */
  readonly now: string;
}

/** What the runtime must do after a step. */
export interface AccessStepResult {
  readonly previousState: string;
  readonly state: string;
  readonly event: AccessEvent;
  /** Operations on metadata (our finalizer); apply before any command. */
  readonly metadataPatch: readonly PatchOperation[];
  readonly statusPatch: readonly PatchOperation[];
  readonly commands: readonly AccessCommand[];
  readonly events: readonly EventParams[];
}

/**
 * The AccessRequest CRD (upstream's) has no field for the machine state, so the state is read back
 * from what the object does show: deletion, phase and our finalizer.
 */
export function accessStateOf(request: AccessRequest): string {
  const ourFinalizer = request.metadata.finalizers?.includes(FINALIZERS.accessRequest) ?? false;
  if (request.metadata.deletionTimestamp) return "deleting.revoking";
  if (request.status?.phase === REQUEST_PHASES.granted) return "granted";
  if (request.status?.phase === REQUEST_PHASES.denied) return "denied";
  return ourFinalizer ? "provisioning" : "pending";
}

const snapshots = new Map<string, AnyMachineSnapshot>();

function restore(state: string): AnyMachineSnapshot {
  let snapshot = snapshots.get(state);
  if (!snapshot) {
    const [head = "pending", child] = state.split(".");
    snapshot = accessRequestMachine.resolveState({ value: child ? { [head]: child } : head, context: {} });
    snapshots.set(state, snapshot);
  }
  return snapshot;
}

/** One step: transition the machine, then derive metadata and status from the new state and the facts. */
export function stepAccessRequest(input: AccessStepInput): AccessStepResult {
  const { request, facts } = input;
  const previousState = accessStateOf(request);
  const event: AccessEvent = { type: "observed", facts };
  const [snapshot, actions] = transition(restore(previousState), event);
  const state = stateValueToString(snapshot.value);

  let finalizer: "add" | "remove" | undefined;
  const commands: AccessCommand[] = [];
  const events: EventParams[] = [];
  for (const action of actions) {
    if (action.type === "addFinalizer") finalizer = "add";
    else if (action.type === "removeFinalizer") finalizer = "remove";
    else if (action.type === "recordEvent") events.push(eventWithDetail(action.params as EventParams, facts));
    else if (
      action.type === "grantAccess" ||
      action.type === "issueCredential" ||
      action.type === "revokeAccess"
    ) {
      if (!commands.includes(action.type)) commands.push(action.type);
    }
  }

  const metadata = produce(request.metadata, (draft) => {
    const finalizers = draft.finalizers ?? [];
    if (finalizer === "add" && !finalizers.includes(FINALIZERS.accessRequest)) {
      draft.finalizers = [...finalizers, FINALIZERS.accessRequest];
    }
    if (finalizer === "remove" && finalizers.includes(FINALIZERS.accessRequest)) {
      draft.finalizers = finalizers.filter((name) => name !== FINALIZERS.accessRequest);
    }
  });
  const status = desiredStatus(input, state, commands.includes("issueCredential"));
  return {
    previousState,
    state,
    event,
    metadataPatch: diff({ metadata: request.metadata as Json }, { metadata: metadata as Json }),
    statusPatch: diff(request.status === undefined ? {} : { status: request.status as unknown as Json }, {
      status: status as unknown as Json,
    }),
    commands,
    events,
  };
}

function eventWithDetail(params: EventParams, facts: AccessFacts): EventParams {
  return params.reason === "Denied" && facts.denial
    ? { ...params, message: `Access denied: ${facts.denial}` }
    : params;
}

function desiredStatus(input: AccessStepInput, state: string, issuing: boolean): AccessRequestStatus {
  const { request, facts } = input;
  const generation = request.metadata.generation ?? 0;
  const updates: ConditionUpdate[] = [
    facts.clusterReachable
      ? { type: CONDITION_TYPES.clusterReady, status: "True", reason: REASONS.Ready, message: "" }
      : {
          type: CONDITION_TYPES.clusterReady,
          status: "False",
          reason: REASONS.InvalidReference,
          message: input.clusterProblem ?? "the target Cluster is not ready",
        },
    accessCondition(state, facts),
  ];
  const conditions = mergeConditions(request.status?.conditions, updates, generation, input.now);
  const phase =
    state === "granted"
      ? REQUEST_PHASES.granted
      : state === "denied"
        ? REQUEST_PHASES.denied
        : state.startsWith("deleting")
          ? (request.status?.phase ?? REQUEST_PHASES.pending)
          : REQUEST_PHASES.pending;
  const hasSecret = request.status?.secretRef !== undefined || issuing || state === "granted";
  return {
    ...request.status,
    observedGeneration: generation,
    phase,
    conditions,
    ...(hasSecret && !state.startsWith("deleting") ? { secretRef: { name: input.secretName } } : {}),
  };
}

function accessCondition(state: string, facts: AccessFacts): ConditionUpdate {
  const type = CONDITION_TYPES.accessGranted;
  if (state === "granted") return { type, status: "True", reason: REASONS.Granted, message: "" };
  if (state === "denied")
    return { type, status: "False", reason: REASONS.Denied, message: facts.denial ?? "" };
  if (state.startsWith("deleting")) {
    return { type, status: "False", reason: REASONS.Deleting, message: "removing the access objects" };
  }
  return {
    type,
    status: "False",
    reason: REASONS.Provisioning,
    message: facts.clusterReachable ? "granting access" : "waiting for the target Cluster",
  };
}
