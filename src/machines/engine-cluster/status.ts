/** The status an EngineCluster shows: the v1beta2 contract's fields and conditions, the machine's state and phase. */
import { type ApiEndpoint, CAPI_CONDITIONS } from "../../api/cluster-api.ts";
import { REASONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import {
  CAPI_OWNED_REASONS,
  NOT_PAUSED,
  pausedObjectStatus,
  progressCondition,
  type ServingInput,
  servingCondition,
} from "../cluster/capi-owned-status.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import type { EngineClusterFacts } from "./machine.ts";

/** Reasons of the EngineCluster's conditions beyond the shared {@link REASONS}. */
export const ENGINE_CLUSTER_REASONS = CAPI_OWNED_REASONS;

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
      [readyCondition(input), NOT_PAUSED],
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
  return pausedObjectStatus(cluster, why, now);
}

function readyCondition(input: EngineClusterStatusInput): ConditionUpdate {
  const { cluster, facts, state } = input;
  const type = CAPI_CONDITIONS.ready;
  const backend = facts.backend;
  const name = `EngineCluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  const serving: ServingInput = {
    type,
    what: "the cluster",
    facts,
    state,
    endpoint: input.endpoint,
    backendEndpoint: input.backendEndpoint,
    lastError: input.lastError,
  };
  if (input.provisioned && backend.exists) return servingCondition(serving, REASONS.Ready, backend.version);
  const progress = progressCondition(serving);
  if (progress) return progress;
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
