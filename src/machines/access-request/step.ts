/** The pure reconcile step for an AccessRequest, on the generic step: what only the AccessRequest kind brings to it. */
import type { AccessRequest, AccessRequestStatus } from "../../api/access-request.ts";
import type { RequestPhase } from "../../api/cluster-request.ts";
import {
  ACCESS_REQUEST_ANNOTATIONS,
  ACCESS_REQUEST_CONDITION_TYPES,
  ACCESS_REQUEST_FINALIZERS,
  ACCESS_REQUEST_LABELS,
  ACCESS_REQUEST_REASONS,
} from "../../api/constants/access-request.ts";
import { HIBERNATION_REASONS } from "../../api/constants/hibernation.ts";
import { CONDITION_TYPES, LABELS, REASONS, REQUEST_PHASES } from "../../api/constants.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { type KindStep, kindStep, type StepBasics } from "../shared/kind-step.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import type { TargetProblem } from "./facts.ts";
import { type AccessFacts, accessRequestMachine } from "./machine.ts";

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
  const ourFinalizer =
    request.metadata.finalizers?.includes(ACCESS_REQUEST_FINALIZERS.accessRequest) ?? false;
  if (request.metadata.deletionTimestamp && ourFinalizer) return "ours";
  if (!labels[LABELS.provider] || !labels[ACCESS_REQUEST_LABELS.profile]) return "notPrepared";
  if (labels[LABELS.provider] !== providerName) return "notOurs";
  const phase = request.status?.phase;
  const current = request.status?.observedGeneration === request.metadata.generation;
  if (phase === REQUEST_PHASES.granted && !current) return "awaitingPreparation";
  return "ours";
}

/**
 * How long issued tokens live, and when to look again: while waiting for a Cluster, granting or revoking
 * (poll), while denied (retry), at rest to notice drift on the target (resync; sooner when the token is
 * due for renewal or a referenced role is missing).
 */
export interface AccessTiming extends RequeueTiming {
  /** Validity of issued tokens (the API server's minimum is 10 minutes). */
  readonly tokenValidityMs: number;
}

/** At rest with a referenced role missing (not watched on the target), look again after this many polls. */
export const MISSING_ROLE_POLLS = 6;

/** Everything one step needs; all of it data. */
export interface AccessStepInput extends StepBasics {
  readonly request: AccessRequest;
  readonly facts: AccessFacts;
  /** Name of the Secret that holds (or will hold) the kubeconfig, in the request's namespace. */
  readonly secretName: string;
  /** Why the Cluster is not reachable, for the condition (when facts.clusterReachable is false). */
  readonly clusterProblem?: string;
  /** The Cluster is not reachable because it sleeps (hibernation). */
  readonly clusterAsleep?: boolean;
  /** A call on the target's API server that failed in this reconcile (facts.targetFailing), for the condition and the Event. */
  readonly targetProblem?: TargetProblem;
  /** When to look again; without it the step asks for no requeue. */
  readonly timing?: AccessTiming;
  /** Milliseconds until the current token is due for renewal, if the Secret holds one. */
  readonly untilRenewalMs?: number;
  /** The Cluster's URL from the host, when its kubeconfigs name an internal address: annotated on a Granted request. */
  readonly localAccess?: string;
}

/** What the runtime must do after a step: write `desired`, run the commands, record the Events. */
export type AccessStepResult = KindStep<AccessRequest, AccessRequestStatus, AccessCommand, AccessFacts>;

/**
 * The AccessRequest CRD (upstream's) has no field for the machine state, so the state is read back
 * from what the object does show: deletion, phase and our finalizer.
 */
export function accessStateOf(request: AccessRequest): string {
  const ourFinalizer =
    request.metadata.finalizers?.includes(ACCESS_REQUEST_FINALIZERS.accessRequest) ?? false;
  if (request.metadata.deletionTimestamp) return "deleting.revoking";
  if (request.status?.phase === REQUEST_PHASES.granted) return "granted";
  if (request.status?.phase === REQUEST_PHASES.denied) return "denied";
  return ourFinalizer ? "provisioning" : "pending";
}

/**
 * One step: transition the machine, then derive metadata and status from the new state and the facts. While
 * the target fails, the next look backs off: it waits as long as the failure has lasted (from the
 * AccessGranted condition's transition time, so the backoff survives a restart), between `pollMs` and `resyncMs`.
 */
export function stepAccessRequest(input: AccessStepInput): AccessStepResult {
  const result = baseStep(input);
  const timing = input.timing;
  if (!input.targetProblem || !timing || result.requeueAfterMs === undefined) return result;
  const since = result.desired.status?.conditions?.find(
    (c) => c.type === ACCESS_REQUEST_CONDITION_TYPES.accessGranted,
  )?.lastTransitionTime;
  const lasted = since ? Date.parse(input.now) - Date.parse(since) : 0;
  const backoff = Math.min(timing.resyncMs, Math.max(timing.pollMs, Number.isFinite(lasted) ? lasted : 0));
  // Granted or not, a failing target is looked at on this backoff; a token due for renewal sooner is renewed then.
  const renewal = input.untilRenewalMs === undefined ? backoff : Math.max(1_000, input.untilRenewalMs);
  return { ...result, requeueAfterMs: Math.min(backoff, renewal) };
}

const baseStep: (input: AccessStepInput) => AccessStepResult = kindStep<{
  input: AccessStepInput;
  object: AccessRequest;
  facts: AccessFacts;
  command: AccessCommand;
  status: AccessRequestStatus;
  derived: ConditionUpdate | undefined;
}>({
  machine: accessRequestMachine,
  object: (input) => input.request,
  readState: accessStateOf,
  facts: (input) => input.facts,
  finalizer: ACCESS_REQUEST_FINALIZERS.accessRequest,
  actions: {
    grantAccess: () => "grantAccess",
    issueCredential: () => "issueCredential",
    revokeAccess: () => "revokeAccess",
  },
  event: (record, { facts }) => eventWithDetail(record, facts),
  derive: ({ input, state, facts }) => rolesCondition(input.request, state, facts),
  metadata: (draft, { input, phase }) => {
    const url = phase === REQUEST_PHASES.granted ? input.localAccess : undefined;
    if (url !== undefined) {
      draft.annotations ??= {};
      draft.annotations[ACCESS_REQUEST_ANNOTATIONS.localAccess] = url;
    } else if (draft.annotations?.[ACCESS_REQUEST_ANNOTATIONS.localAccess] !== undefined) {
      delete draft.annotations[ACCESS_REQUEST_ANNOTATIONS.localAccess];
    }
  },
  moreEvents: ({ input }, roles) => {
    const event = roles && rolesEventOf(input.request, roles);
    const refusal = input.targetProblem && targetEventOf(input.request, input.targetProblem);
    return [...(event ? [event] : []), ...(refusal ? [refusal] : [])];
  },
  status: ({ input, state, phase, commands }, roles) =>
    desiredStatus(input, state, phase, commands.includes("issueCredential"), roles),
  // At rest, sooner when a referenced role is missing (roles on the target are not watched), and by the token's renewal.
  atRest: ({ input }, roles) => {
    const timing = input.timing;
    const soon = [
      ...(timing && roles?.status === "False" ? [timing.pollMs * MISSING_ROLE_POLLS] : []),
      ...(input.untilRenewalMs === undefined ? [] : [Math.max(1_000, input.untilRenewalMs)]),
    ];
    return soon.length > 0 ? Math.min(...soon) : undefined;
  },
});

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
  const type = ACCESS_REQUEST_CONDITION_TYPES.referencedRolesExist;
  if (!bindsByReference(request)) {
    // Conditions are never deleted: one left from an earlier spec must not keep saying a role is missing.
    const had = request.status?.conditions?.some((c) => c.type === type) ?? false;
    return had
      ? {
          type,
          status: "True",
          reason: ACCESS_REQUEST_REASONS.RolesFound,
          message: "no role is bound by reference",
        }
      : undefined;
  }
  if (!facts.clusterReachable) return undefined;
  if (state !== "granted" && state !== "provisioning") return undefined;
  if (facts.missingRoles.length === 0)
    return { type, status: "True", reason: ACCESS_REQUEST_REASONS.RolesFound, message: "" };
  return {
    type,
    status: "False",
    reason: ACCESS_REQUEST_REASONS.RoleMissing,
    message: `${facts.missingRoles.join("; ")}: a binding to a missing role grants nothing until the role exists`,
  };
}

/** A Warning when a referenced role goes missing (or another one does), a Normal Event when all are found again. */
function rolesEventOf(request: AccessRequest, roles: ConditionUpdate): EventRecord | undefined {
  const before = request.status?.conditions?.find((c) => c.type === roles.type);
  if (roles.status === "False" && before?.message !== roles.message) {
    return { type: "Warning", reason: ACCESS_REQUEST_REASONS.RoleMissing, message: roles.message };
  }
  if (roles.status === "True" && before?.status === "False") {
    return {
      type: "Normal",
      reason: ACCESS_REQUEST_REASONS.RolesFound,
      message: "no referenced role is missing now",
    };
  }
  return undefined;
}

/**
 * A Warning when the target starts failing, or fails otherwise than the AccessGranted condition says already;
 * none for a failed command, which the runtime's failure Event tells (one Warning per failure).
 */
function targetEventOf(request: AccessRequest, problem: TargetProblem): EventRecord | undefined {
  if (problem.inCommand) return undefined;
  const before = request.status?.conditions?.find(
    (c) => c.type === ACCESS_REQUEST_CONDITION_TYPES.accessGranted,
  );
  return before?.reason === problem.reason && before.message === problem.message
    ? undefined
    : { type: "Warning", reason: problem.reason, message: problem.message };
}

function eventWithDetail(params: EventRecord, facts: AccessFacts): EventRecord {
  return params.reason === "Denied" && facts.denial
    ? { ...params, reason: facts.denialReason ?? params.reason, message: `Access denied: ${facts.denial}` }
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
  // The Cluster is Ready when its target was read, or failed to answer (what failed is on AccessGranted).
  const clusterReady = facts.clusterReachable || (input.targetProblem !== undefined && !input.clusterProblem);
  const updates: ConditionUpdate[] = [
    clusterReady
      ? { type: CONDITION_TYPES.clusterReady, status: "True", reason: REASONS.Ready, message: "" }
      : {
          type: CONDITION_TYPES.clusterReady,
          status: "False",
          reason: input.clusterAsleep
            ? HIBERNATION_REASONS.ClusterHibernated
            : ACCESS_REQUEST_REASONS.InvalidReference,
          message: input.clusterProblem ?? "the target Cluster is not ready",
        },
    accessCondition(state, facts, input.lastError, input.targetProblem),
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

function accessCondition(
  state: string,
  facts: AccessFacts,
  lastError: string | undefined,
  targetProblem: TargetProblem | undefined,
): ConditionUpdate {
  const type = ACCESS_REQUEST_CONDITION_TYPES.accessGranted;
  if (state === "denied") {
    return {
      type,
      status: "False",
      reason: facts.denialReason ?? REASONS.Denied,
      message: facts.denial ?? "",
    };
  }
  // Granted, granting or revoking: a target that fails now is what a person must hear about.
  if (targetProblem)
    return { type, status: "False", reason: targetProblem.reason, message: targetProblem.message };
  if (state === "granted") return { type, status: "True", reason: REASONS.Granted, message: "" };
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
