/** The pure reconcile step for an AccessRequest: (request, facts, now) → next state, desired object, commands, Events. */
import { produce } from "immer";
import type { AnyMachineSnapshot } from "xstate";
import type { AccessRequest, AccessRequestStatus } from "../../api/access-request.ts";
import type { RequestPhase } from "../../api/cluster-request.ts";
import { CONDITION_TYPES, FINALIZERS, LABELS, REASONS, REQUEST_PHASES } from "../../api/constants.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { applyFinalizerWish, type FinalizerWish } from "../shared/finalizer.ts";
import type { EventRecord, MachineStep } from "../shared/machine-step.ts";
import { requeueClass, taggedPhase } from "../shared/machine-tags.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { snapshotRestorer } from "../shared/snapshots.ts";
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

/** How long issued tokens live, and when to look again. */
export interface AccessTiming {
  /** Validity of issued tokens (the API server's minimum is 10 minutes). */
  readonly tokenValidityMs: number;
  /** Look again while waiting for a Cluster, while granting or revoking, and while denied. */
  readonly pollMs: number;
  /** Look again at rest, to notice drift on the target (sooner when the token is due for renewal). */
  readonly resyncMs: number;
}

/** At rest with a referenced role missing (not watched on the target), look again after this many polls. */
export const MISSING_ROLE_POLLS = 6;

/** Everything one step needs; all of it data. */
export interface AccessStepInput {
  readonly request: AccessRequest;
  readonly facts: AccessFacts;
  /** Name of the Secret that holds (or will hold) the kubeconfig, in the request's namespace. */
  readonly secretName: string;
  /** Why the Cluster is not reachable, for the condition (when facts.clusterReachable is false). */
  readonly clusterProblem?: string;
  /** Message of the last failed command on the target cluster, while it keeps failing. */
  readonly lastError?: string;
  /** The current time (RFC 3339), only for lastTransitionTime of changed conditions. */
  readonly now: string;
  /** When to look again; without it the step asks for no requeue. */
  readonly timing?: AccessTiming;
  /** Milliseconds until the current token is due for renewal, if the Secret holds one. */
  readonly untilRenewalMs?: number;
}

/** What the runtime must do after a step: write `desired`, run the commands, record the Events. */
export interface AccessStepResult
  extends MachineStep<AccessRequest["metadata"], AccessRequestStatus, AccessCommand> {
  readonly event: AccessEvent;
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

const restore = snapshotRestorer(accessRequestMachine);

/** One step: transition the machine, then derive metadata and status from the new state and the facts. */
export function stepAccessRequest(input: AccessStepInput): AccessStepResult {
  const { request, facts } = input;
  const previousState = accessStateOf(request);
  const event: AccessEvent = { type: "observed", facts };
  const [snapshot, actions] = transition(restore(previousState), event);
  const state = stateValueToString(snapshot.value);

  let finalizer: FinalizerWish;
  const commands: AccessCommand[] = [];
  const events: EventRecord[] = [];
  for (const action of actions) {
    if (action.type === "addFinalizer") finalizer = "add";
    else if (action.type === "removeFinalizer") finalizer = "remove";
    else if (action.type === "recordEvent") events.push(eventWithDetail(action.params as EventRecord, facts));
    else if (
      action.type === "grantAccess" ||
      action.type === "issueCredential" ||
      action.type === "revokeAccess"
    ) {
      if (!commands.includes(action.type)) commands.push(action.type);
    }
  }

  const metadata = produce(request.metadata, (draft) => {
    applyFinalizerWish(draft, FINALIZERS.accessRequest, finalizer);
  });
  const roles = rolesCondition(request, state, facts);
  const rolesEvent = roles && rolesEventOf(request, roles);
  if (rolesEvent) events.push(rolesEvent);
  return {
    previousState,
    state,
    event,
    desired: {
      metadata,
      status: desiredStatus(input, state, taggedPhase(snapshot), commands.includes("issueCredential"), roles),
    },
    commands,
    events,
    requeueAfterMs: requeueAfter(snapshot, input, roles?.status === "False"),
  };
}

/** Whether the request binds any role by reference (token.roleRefs, oidc.roleBindings[].roleRefs). */
function bindsByReference(request: AccessRequest): boolean {
  const { token, oidc } = request.spec;
  return (token?.roleRefs?.length ?? 0) > 0 || (oidc?.roleBindings ?? []).some((b) => b.roleRefs.length > 0);
}

/**
 * Whether the roles the request binds by reference exist, while its bindings are (being) applied; undefined
 * when there is nothing to say (no references and never were, the target not reachable, denied, deleting).
 */
function rolesCondition(
  request: AccessRequest,
  state: string,
  facts: AccessFacts,
): ConditionUpdate | undefined {
  const type = CONDITION_TYPES.referencedRolesExist;
  if (!bindsByReference(request)) {
    // Conditions are never deleted: one left from an earlier spec must not keep saying a role is missing.
    const had = request.status?.conditions?.some((c) => c.type === type) ?? false;
    return had
      ? { type, status: "True", reason: REASONS.RolesFound, message: "no role is bound by reference" }
      : undefined;
  }
  if (!facts.clusterReachable) return undefined;
  if (state !== "granted" && state !== "provisioning") return undefined;
  if (facts.missingRoles.length === 0)
    return { type, status: "True", reason: REASONS.RolesFound, message: "" };
  return {
    type,
    status: "False",
    reason: REASONS.RoleMissing,
    message: `${facts.missingRoles.join("; ")}: a binding to a missing role grants nothing until the role exists`,
  };
}

/** A Warning when a referenced role goes missing (or another one does), a Normal Event when all are found again. */
function rolesEventOf(request: AccessRequest, roles: ConditionUpdate): EventRecord | undefined {
  const before = request.status?.conditions?.find((c) => c.type === roles.type);
  if (roles.status === "False" && before?.message !== roles.message) {
    return { type: "Warning", reason: REASONS.RoleMissing, message: roles.message };
  }
  if (roles.status === "True" && before?.status === "False") {
    return { type: "Normal", reason: REASONS.RolesFound, message: "no referenced role is missing now" };
  }
  return undefined;
}

/**
 * When to look again, from the requeue class the new state is tagged with; at rest, by the token's renewal
 * too, and sooner while a referenced role is missing (roles on the target are not watched).
 */
function requeueAfter(
  snapshot: AnyMachineSnapshot,
  input: AccessStepInput,
  roleMissing: boolean,
): number | undefined {
  const timing = input.timing;
  const wanted = requeueClass(snapshot);
  if (!timing || wanted === undefined) return undefined;
  if (wanted !== "resync") return timing.pollMs;
  const rest = roleMissing ? Math.min(timing.resyncMs, timing.pollMs * MISSING_ROLE_POLLS) : timing.resyncMs;
  if (input.untilRenewalMs === undefined) return rest;
  return Math.max(1_000, Math.min(rest, input.untilRenewalMs));
}

function eventWithDetail(params: EventRecord, facts: AccessFacts): EventRecord {
  return params.reason === "Denied" && facts.denial
    ? { ...params, message: `Access denied: ${facts.denial}` }
    : params;
}

function desiredStatus(
  input: AccessStepInput,
  state: string,
  taggedPhase: string | undefined,
  issuing: boolean,
  roles: ConditionUpdate | undefined,
): AccessRequestStatus {
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
    accessCondition(state, facts, input.lastError),
    ...(roles ? [roles] : []),
  ];
  const conditions = mergeConditions(request.status?.conditions, updates, generation, input.now);
  // The phase is the state's tag; a state without one (deleting) keeps the phase the request showed.
  const phase = (taggedPhase as RequestPhase | undefined) ?? request.status?.phase ?? REQUEST_PHASES.pending;
  const hasSecret = request.status?.secretRef !== undefined || issuing || state === "granted";
  return {
    ...request.status,
    observedGeneration: generation,
    phase,
    conditions,
    ...(hasSecret && !state.startsWith("deleting") ? { secretRef: { name: input.secretName } } : {}),
  };
}

function accessCondition(state: string, facts: AccessFacts, lastError: string | undefined): ConditionUpdate {
  const type = CONDITION_TYPES.accessGranted;
  if (state === "granted") return { type, status: "True", reason: REASONS.Granted, message: "" };
  if (state === "denied")
    return { type, status: "False", reason: REASONS.Denied, message: facts.denial ?? "" };
  if (state.startsWith("deleting")) {
    return { type, status: "False", reason: REASONS.Deleting, message: "removing the access objects" };
  }
  if (lastError !== undefined)
    return { type, status: "False", reason: REASONS.BackendError, message: lastError };
  return {
    type,
    status: "False",
    reason: REASONS.Provisioning,
    message: facts.clusterReachable ? "granting access" : "waiting for the target Cluster",
  };
}
