/**
 * What the statuses of the kinds Cluster API owns (EngineCluster, EngineControlPlane) share: the Paused
 * condition, and the condition that says whether the cluster serves, or what it is doing instead.
 */
import { type ApiEndpoint, CAPI_CONDITIONS } from "../../api/cluster-api.ts";
import type { Condition, ObjectMeta } from "../../api/common.ts";
import { REASONS } from "../../api/constants.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import { type BackendClusterFacts, backendDetail } from "./backend-cluster.ts";

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
export const NOT_PAUSED: ConditionUpdate = {
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
export const endpointText = (endpoint: ApiEndpoint | undefined) =>
  endpoint ? `${endpoint.host}:${endpoint.port}` : "(none)";

/** The reason of a refused version. */
export function versionReason(facts: BackendClusterFacts): string {
  return facts.version?.kind === "downgrade" ? REASONS.DowngradeNotAllowed : REASONS.UnsupportedVersion;
}

/** What a condition of `type` (Ready, Available) says of `what` (the cluster, the control plane). */
export interface ServingInput {
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
export function servingCondition(input: ServingInput, reason: string, version: string): ConditionUpdate {
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
export function progressCondition(input: ServingInput): ConditionUpdate | undefined {
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
