/** The status an EngineCluster shows: the v1beta2 contract's fields and conditions, the machine's state and phase. */
import { type ApiEndpoint, CAPI_CONDITIONS } from "../../api/cluster-api.ts";
import { REASONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import type { EngineClusterFacts } from "./machine.ts";

/** Reasons of the EngineCluster's conditions beyond the shared {@link REASONS}. */
export const ENGINE_CLUSTER_REASONS = {
  /** No CAPI Cluster owns it yet: nothing is built until one names it in spec.infrastructureRef. */
  WaitingForClusterOwner: "WaitingForClusterOwner",
  Paused: "Paused",
  NotPaused: "NotPaused",
  /** The backend now reports another endpoint than the one published (which the contract forbids changing). */
  EndpointMoved: "EndpointMoved",
} as const;

/** What the status is computed from. */
export interface EngineClusterStatusInput {
  readonly cluster: EngineCluster;
  readonly facts: EngineClusterFacts;
  readonly state: string;
  /** The phase the state is tagged with. */
  readonly phase: string | undefined;
  /** In `provisioned` with an endpoint: the contract's provisioned signal. */
  readonly provisioned: boolean;
  /** The endpoint published (the spec's once set). */
  readonly endpoint: ApiEndpoint | undefined;
  /** The endpoint the backend reports now. */
  readonly backendEndpoint: ApiEndpoint | undefined;
  readonly lastError?: string;
  readonly now: string;
}

const notPaused: ConditionUpdate = {
  type: CAPI_CONDITIONS.paused,
  status: "False",
  reason: ENGINE_CLUSTER_REASONS.NotPaused,
  message: "",
};

/** The status for the step's state; unchanged parts keep their values, so an idle step writes nothing. */
export function desiredEngineClusterStatus(input: EngineClusterStatusInput): EngineClusterStatus {
  const { cluster, facts } = input;
  const previous = cluster.status;
  const generation = cluster.metadata.generation ?? 0;
  // Once provisioned, always provisioned: CAPI reads it as "initial provisioning is done".
  const provisioned = input.provisioned || previous?.initialization?.provisioned === true;
  const backend = facts.backend;
  const status: Record<string, unknown> = {
    ...previous,
    observedGeneration: generation,
    ...(input.phase ? { phase: input.phase } : {}),
    state: input.state,
    initialization: { ...previous?.initialization, provisioned },
    ready: provisioned,
    conditions: mergeConditions(
      previous?.conditions,
      [readyCondition(input), notPaused],
      generation,
      input.now,
    ),
  };
  if (backend.exists) {
    status.version = backend.version;
    if (backend.failureDomains && backend.failureDomains.length > 0)
      status.failureDomains = backend.failureDomains;
  }
  return status as EngineClusterStatus;
}

/** The status of a paused EngineCluster: what it was, with the Paused condition True and why. */
export function pausedStatus(cluster: EngineCluster, why: string, now: string): EngineClusterStatus {
  const generation = cluster.metadata.generation ?? 0;
  return {
    ...cluster.status,
    conditions: mergeConditions(
      cluster.status?.conditions,
      [
        {
          type: CAPI_CONDITIONS.paused,
          status: "True",
          reason: ENGINE_CLUSTER_REASONS.Paused,
          message: `${why}: no changes, no backend calls until it is unpaused`,
        },
      ],
      generation,
      now,
    ),
  };
}

const endpointText = (endpoint: ApiEndpoint | undefined) =>
  endpoint ? `${endpoint.host}:${endpoint.port}` : "(none)";

function readyCondition(input: EngineClusterStatusInput): ConditionUpdate {
  const { cluster, facts, state } = input;
  const type = CAPI_CONDITIONS.ready;
  const backend = facts.backend;
  const detail = backend.exists
    ? ` (backend: ${backend.phase}${backend.message ? `, ${backend.message}` : ""})`
    : "";
  const name = `EngineCluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  if (input.provisioned && backend.exists) {
    const moved =
      input.backendEndpoint &&
      input.endpoint &&
      endpointText(input.backendEndpoint) !== endpointText(input.endpoint);
    return moved
      ? {
          type,
          status: "False",
          reason: ENGINE_CLUSTER_REASONS.EndpointMoved,
          message: `the backend now serves the cluster at ${endpointText(input.backendEndpoint)}, but spec.controlPlaneEndpoint is ${endpointText(input.endpoint)} and may not change; recreate the Cluster`,
        }
      : {
          type,
          status: "True",
          reason: REASONS.Ready,
          message: `Kubernetes ${backend.version} at ${endpointText(input.endpoint)}`,
        };
  }
  if (input.lastError !== undefined) {
    return { type, status: "False", reason: REASONS.BackendError, message: input.lastError };
  }
  if (state.startsWith("deleting")) {
    return facts.foreignFinalizers.length > 0 && state === "deleting.blocked"
      ? {
          type,
          status: "False",
          reason: REASONS.WaitingForForeignFinalizers,
          message: `waiting for finalizers: ${facts.foreignFinalizers.join(", ")}`,
        }
      : { type, status: "False", reason: REASONS.Deleting, message: `deleting the cluster${detail}` };
  }
  if (state === "provisioning") {
    return { type, status: "False", reason: REASONS.Provisioning, message: `creating the cluster${detail}` };
  }
  if (state === "failed") {
    return facts.version && facts.version.kind !== "accepted"
      ? { type, status: "False", reason: versionReason(facts), message: facts.version.message }
      : {
          type,
          status: "False",
          reason: REASONS.BackendError,
          message: `the backend reports the cluster failed${detail}`,
        };
  }
  if (facts.owner === undefined) {
    return {
      type,
      status: "False",
      reason: ENGINE_CLUSTER_REASONS.WaitingForClusterOwner,
      message: `no Cluster API Cluster owns ${name} yet; name it in a Cluster's spec.infrastructureRef (nothing is built until then)`,
    };
  }
  if (!facts.profileFound) {
    return {
      type,
      status: "False",
      reason: REASONS.ProfileNotFound,
      message: `ClusterProfile "${cluster.spec.profile}" does not exist; create it or fix spec.profile (retrying)`,
    };
  }
  return { type, status: "False", reason: "Pending", message: "waiting to create the cluster" };
}

function versionReason(facts: EngineClusterFacts): string {
  return facts.version?.kind === "downgrade" ? REASONS.DowngradeNotAllowed : REASONS.UnsupportedVersion;
}
