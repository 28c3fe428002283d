/**
 * The one status recipe of the kinds Cluster API owns (EngineCluster, EngineControlPlane): the machine's
 * state and phase, the contract's "it came up once" signal, the contract's main condition (whether the
 * cluster serves, or what it is doing instead), the Paused condition. A kind adds its own fields and
 * conditions ({@link CapiOwnedStatusSpec}).
 */
import type { ClusterObservation } from "../../api/backend.ts";
import { type ApiEndpoint, CAPI_CONDITIONS } from "../../api/cluster-api.ts";
import type { Condition, ObjectMeta } from "../../api/common.ts";
import { REASONS } from "../../api/constants.ts";
import {
  type BackendClusterFacts,
  backendDetail,
  lostCondition,
  notServing,
} from "../backend-cluster/backend-cluster.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import type { CapiOwnedFacts } from "./machine.ts";

/** Reasons of the conditions of every CAPI-owned kind beyond the shared {@link REASONS}. */
export const CAPI_OWNED_REASONS = {
  /** No CAPI Cluster owns it yet: nothing is built until one names it. */
  WaitingForClusterOwner: "WaitingForClusterOwner",
  Paused: "Paused",
  NotPaused: "NotPaused",
  /** The backend now reports another endpoint than the one published (which the contract forbids changing). */
  EndpointMoved: "EndpointMoved",
} as const;

/** The Paused condition of an object that is not paused. */
const NOT_PAUSED: ConditionUpdate = {
  type: CAPI_CONDITIONS.paused,
  status: "False",
  reason: CAPI_OWNED_REASONS.NotPaused,
  message: "",
};

/** The status of a paused object: what it was, with the Paused condition True and why. */
export function pausedObjectStatus<Status extends { readonly conditions?: readonly Condition[] }>(
  object: { readonly metadata: ObjectMeta; readonly status?: Status | undefined },
  why: string,
  now: string,
): Status {
  // Every field of a status is optional: one never written is the empty status.
  const previous = object.status ?? ({} as Status);
  return {
    ...previous,
    conditions: mergeConditions(
      object.status?.conditions,
      [
        {
          type: CAPI_CONDITIONS.paused,
          status: "True",
          reason: CAPI_OWNED_REASONS.Paused,
          message: `${why}: no changes, no backend calls until it is unpaused`,
        },
      ],
      object.metadata.generation ?? 0,
      now,
    ),
  };
}

/** `host:port`, or `(none)`. */
const endpointText = (endpoint: ApiEndpoint | undefined) =>
  endpoint ? `${endpoint.host}:${endpoint.port}` : "(none)";

/** The reason of a refused version. */
export function versionReason(facts: BackendClusterFacts): string {
  return facts.version?.kind === "downgrade" ? REASONS.DowngradeNotAllowed : REASONS.UnsupportedVersion;
}

/** What a condition of `type` (Ready, Available) says of `what` (the cluster, the control plane). */
interface ServingInput {
  readonly type: string;
  readonly what: string;
  readonly facts: BackendClusterFacts;
  readonly state: string;
  /** The endpoint published (the spec's once set). */
  readonly endpoint: ApiEndpoint | undefined;
  /** The endpoint the backend reports now. */
  readonly backendEndpoint: ApiEndpoint | undefined;
  readonly lastError: string | undefined;
}

/**
 * The condition of a cluster that serves (`version` its Kubernetes version): True with `reason`, unless the
 * backend moved it away from the published endpoint (which the contract forbids changing).
 */
function servingCondition(input: ServingInput, reason: string, version: string): ConditionUpdate {
  const { type, endpoint, backendEndpoint } = input;
  const moved = backendEndpoint && endpoint && endpointText(backendEndpoint) !== endpointText(endpoint);
  return moved
    ? {
        type,
        status: "False",
        reason: CAPI_OWNED_REASONS.EndpointMoved,
        message: `the backend now serves ${input.what} at ${endpointText(backendEndpoint)}, but spec.controlPlaneEndpoint is ${endpointText(endpoint)} and may not change; recreate the Cluster`,
      }
    : { type, status: "True", reason, message: `Kubernetes ${version} at ${endpointText(endpoint)}` };
}

/**
 * The condition of a cluster that does not serve because of what the engine is doing with it (a failed
 * command, deleting, creating, failed); undefined when it only waits for something to be built.
 */
function progressCondition(input: ServingInput): ConditionUpdate | undefined {
  const { type, what, facts, state } = input;
  const detail = backendDetail(facts.backend);
  const notServing = (reason: string, message: string): ConditionUpdate => ({
    type,
    status: "False",
    reason,
    message,
  });
  if (input.lastError !== undefined) return notServing(REASONS.BackendError, input.lastError);
  if (state.startsWith("deleting")) {
    return facts.foreignFinalizers.length > 0 && state === "deleting.blocked"
      ? notServing(
          REASONS.WaitingForForeignFinalizers,
          `waiting for finalizers: ${facts.foreignFinalizers.join(", ")}`,
        )
      : notServing(REASONS.Deleting, `deleting ${what}${detail}`);
  }
  if (state === "provisioning") return notServing(REASONS.Provisioning, `creating ${what}${detail}`);
  if (state === "failed") {
    return facts.version && facts.version.kind !== "accepted"
      ? notServing(versionReason(facts), facts.version.message)
      : notServing(REASONS.BackendError, `the backend reports ${what} failed${detail}`);
  }
  return undefined;
}

/** An object a CAPI Cluster owns, as far as its status goes. */
export interface CapiOwnedStatusObject<Status> {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly profile: string };
  readonly status?: Status | undefined;
}

/** The status fields every CAPI-owned kind reads back. */
export interface CapiOwnedStatusFields {
  /** The machine state the next step starts from. */
  readonly state?: string;
  readonly initialization?: Readonly<Record<string, boolean | undefined>>;
  readonly conditions?: readonly Condition[];
}

/** What a status is computed from. */
export interface CapiOwnedStatusInput<Obj, Facts extends CapiOwnedFacts> {
  readonly object: Obj;
  readonly facts: Facts;
  readonly state: string;
  /** The phase the state is tagged with. */
  readonly phase: string | undefined;
  /** In the serving state with an endpoint: the contract's provisioned (or initialized) signal. */
  readonly serving: boolean;
  /** The endpoint published (the spec's once set). */
  readonly endpoint: ApiEndpoint | undefined;
  /** The endpoint the backend reports now. */
  readonly backendEndpoint: ApiEndpoint | undefined;
  readonly lastError?: string;
  readonly now: string;
  /** While its profile is missing: this provider's profiles, named beside the missing one. */
  readonly knownProfiles?: readonly string[];
}

/** What a kind's contract says of its status; the rest is the family's. */
export interface CapiOwnedStatusSpec<Obj, Status, Facts extends CapiOwnedFacts> {
  /** The Kubernetes kind, for messages. */
  readonly kind: string;
  /** What it holds at the backend: "the cluster", "the control plane". */
  readonly what: string;
  /** The contract's main condition: `Ready` (InfraCluster), `Available` (ControlPlane). */
  readonly condition: string;
  /** That condition's reason while it serves. */
  readonly servingReason: string;
  /** The field of a CAPI Cluster that names it: `infrastructureRef`, `controlPlaneRef`. */
  readonly ref: string;
  /** The `status.initialization` field that says it came up once (never taken back). */
  readonly initialized: string;
  /** What else an owned one waits for before its profile is looked at (a control plane: its infrastructure). */
  waitingForOwner?(facts: Facts): Omit<ConditionUpdate, "type" | "status"> | undefined;
  /** The contract's other fields from the signal and the main condition (older spellings, markers). */
  signals(initialized: boolean, condition: ConditionUpdate): Readonly<Record<string, unknown>>;
  /** The kind's conditions besides the main one and Paused, in order after the main one. */
  conditions?(
    input: CapiOwnedStatusInput<Obj, Facts>,
    condition: ConditionUpdate,
  ): readonly ConditionUpdate[];
  /** The fields taken from what the backend reports (the running version, failure domains). */
  backendFields(previous: Status | undefined, backend: ClusterObservation): Readonly<Record<string, unknown>>;
}

/** The status for the step's state; unchanged parts keep their values, so an idle step writes nothing. */
export function desiredCapiOwnedStatus<
  Obj extends CapiOwnedStatusObject<Status>,
  Status extends CapiOwnedStatusFields,
  Facts extends CapiOwnedFacts,
>(spec: CapiOwnedStatusSpec<Obj, Status, Facts>, input: CapiOwnedStatusInput<Obj, Facts>): Status {
  const previous = input.object.status;
  const generation = input.object.metadata.generation ?? 0;
  // Once up, always up: Cluster API reads it as "initial provisioning is done".
  const initialized = input.serving || previous?.initialization?.[spec.initialized] === true;
  const condition = mainCondition(spec, input);
  const status: Record<string, unknown> = {
    ...previous,
    observedGeneration: generation,
    ...(input.phase ? { phase: input.phase } : {}),
    state: input.state,
    initialization: { ...previous?.initialization, [spec.initialized]: initialized },
    ...spec.signals(initialized, condition),
    conditions: mergeConditions(
      previous?.conditions,
      [condition, ...(spec.conditions?.(input, condition) ?? []), NOT_PAUSED],
      generation,
      input.now,
    ),
    ...spec.backendFields(previous, input.facts.backend),
  };
  return status as Status;
}

/**
 * The status while the backend cannot be looked at: the contract's main condition False with what failed; the
 * state does not move (see the Cluster's `unobservedStatus`). Undefined for an object no engine wrote a status for.
 */
export function unobservedCapiOwnedStatus<Status extends CapiOwnedStatusFields>(
  spec: Pick<CapiOwnedStatusSpec<unknown, Status, CapiOwnedFacts>, "condition" | "what">,
  object: { readonly status?: Status | undefined },
  failure: string,
  now: string,
): Status | undefined {
  const previous = object.status;
  if (!previous?.state) return undefined;
  const condition = lostCondition(spec.condition, spec.what, { lookFailed: failure });
  const generation = previous.conditions?.find((c) => c.type === spec.condition)?.observedGeneration ?? 0;
  return { ...previous, conditions: mergeConditions(previous.conditions, [condition], generation, now) };
}

/** The contract's main condition: serving, what the engine is doing instead, or what it waits for. */
function mainCondition<Obj extends CapiOwnedStatusObject<unknown>, Facts extends CapiOwnedFacts>(
  spec: CapiOwnedStatusSpec<Obj, unknown, Facts>,
  input: CapiOwnedStatusInput<Obj, Facts>,
): ConditionUpdate {
  const { object, facts, state } = input;
  const type = spec.condition;
  const backend = facts.backend;
  const serving: ServingInput = {
    type,
    what: spec.what,
    facts,
    state,
    endpoint: input.endpoint,
    backendEndpoint: input.backendEndpoint,
    lastError: input.lastError,
  };
  if (input.serving && backend.exists) {
    // Up once, but the backend reports it not serving any more (its machines stopped): the condition says so.
    const down = notServing(backend);
    return down === undefined
      ? servingCondition(serving, spec.servingReason, backend.version)
      : lostCondition(type, spec.what, { notServing: down });
  }
  const progress = progressCondition(serving);
  if (progress) return progress;
  const waiting = (reason: string, message: string): ConditionUpdate => ({
    type,
    status: "False",
    reason,
    message,
  });
  if (facts.owner === undefined) {
    const name = `${spec.kind} ${object.metadata.namespace}/${object.metadata.name}`;
    return waiting(
      CAPI_OWNED_REASONS.WaitingForClusterOwner,
      `no Cluster API Cluster owns ${name} yet; name it in a Cluster's spec.${spec.ref} (nothing is built until then)`,
    );
  }
  const owner = spec.waitingForOwner?.(facts);
  if (owner) return waiting(owner.reason, owner.message);
  if (!facts.profileFound) {
    const known = input.knownProfiles ?? [];
    return waiting(
      REASONS.ProfileNotFound,
      `ClusterProfile "${object.spec.profile}" does not exist; fix spec.profile or create it (${known.length > 0 ? `this provider's profiles: ${known.join(", ")}` : "this provider has no profiles yet"}; retrying)`,
    );
  }
  return waiting("Pending", `waiting to create ${spec.what}`);
}
