/** The status a Cluster shows for a machine state: conditions, phase, endpoints, the state itself. */
import type { ClusterObservation } from "../../api/backend.ts";
import type { Cluster, ClusterStatus } from "../../api/cluster.ts";
import type { JsonObject } from "../../api/common.ts";
import { CLUSTER_CONDITION_TYPES, CLUSTER_REASONS, ENDPOINTS } from "../../api/constants/cluster.ts";
import {
  HIBERNATE_ANNOTATION,
  HIBERNATION_CONDITION,
  HIBERNATION_REASONS,
  HIBERNATION_STATES,
} from "../../api/constants/hibernation.ts";
import { CONDITION_TYPES, REASONS } from "../../api/constants.ts";
import {
  backendDetail,
  incompleteness,
  lostCondition,
  notServing,
} from "../backend-cluster/backend-cluster.ts";
import type { UnpublishedProfile } from "../cluster-profile/profile.ts";
import { type ConditionUpdate, clusterPhase, mergeConditions } from "../shared/conditions.ts";
import type { ClusterFacts } from "./machine.ts";

/** What the status is computed from: the step's input, of which it reads these. */
export interface ClusterStatusInput {
  readonly cluster: Cluster;
  readonly observation: ClusterObservation;
  /** Message of the last failed backend command, while commands keep failing. */
  readonly lastError?: string;
  /** While the profile is missing: the ProviderConfig of ours that would publish it, and why it does not. */
  readonly unpublished?: UnpublishedProfile;
  /** RFC 3339, for lastTransitionTime of changed conditions. */
  readonly now: string;
  /** Hash of the settings its backend target carries (see machines/rollout/settings.ts); absent: not recorded. */
  readonly settingsHash?: string;
}

/** What the status is made of: the step's input, its facts, the new state and the phase it is tagged with. */
export interface ClusterTransition {
  readonly input: ClusterStatusInput;
  readonly facts: ClusterFacts;
  readonly state: string;
  readonly phase: string | undefined;
}

/** The status for the new state, computed from the step's input and facts; unchanged parts keep their values. */
export function desiredStatus({ input, facts, state, phase }: ClusterTransition): ClusterStatus {
  const { cluster, observation } = input;
  const generation = cluster.metadata.generation ?? 0;
  const conditions = mergeConditions(
    cluster.status?.conditions,
    conditionUpdates(input, facts, state),
    generation,
    input.now,
  );
  const endpoint = observation.exists && !facts.deleting ? observation.endpoint : undefined;
  const previous = cluster.status;
  const providerStatus: JsonObject = {
    ...previous?.providerStatus,
    state,
    // A namespaced backend's tenant namespaces (contract 1.6), as it reports them; kept when it does not say.
    ...(observation.exists && observation.adminNamespaces?.length
      ? { tenantNamespaces: [...observation.adminNamespaces] }
      : {}),
    // The settings it runs, once its backend says it is ready with nothing out of date: what a settings Rollout
    // waits for (a hash, never the values). Kept as it was while it changes.
    ...(input.settingsHash !== undefined &&
    observation.exists &&
    observation.phase === "ready" &&
    observation.outOfDate !== true &&
    !facts.deleting
      ? { settingsHash: input.settingsHash }
      : {}),
  };
  const status: Record<string, unknown> = {
    ...previous,
    observedGeneration: generation,
    phase: clusterPhase(phase, conditions),
    conditions,
    providerStatus,
  };
  if (endpoint) {
    const internal = observation.exists ? observation.internalEndpoint : undefined;
    status.endpoints = [
      { name: ENDPOINTS.external, url: endpoint },
      ...(internal ? [{ name: ENDPOINTS.internal, url: internal }] : []),
    ];
    status.apiServer = endpoint;
  } else if (!observation.exists && state !== "takingOver") {
    // While a moved Cluster is taken over, the backend is not asked (it cannot answer before the import):
    // what the status published before stays.
    delete status.endpoints;
    delete status.apiServer;
  }
  return status as unknown as ClusterStatus;
}

/**
 * The status while the backend cannot be looked at (its credentials gone, unreachable): ClusterReady False with
 * what failed, the phase following it, everything else as it was. Nothing is known, so the state does not
 * move and nothing is ordered; the next look that succeeds computes the status again. Undefined for a
 * Cluster no engine has written a status for yet.
 */
export function unobservedStatus(cluster: Cluster, failure: string, now: string): ClusterStatus | undefined {
  const previous = cluster.status;
  if (!previous?.providerStatus?.state) return undefined;
  const conditions = mergeConditions(
    previous.conditions,
    [lostCondition(CONDITION_TYPES.clusterReady, "the cluster", { lookFailed: failure })],
    previous.observedGeneration,
    now,
  );
  return { ...previous, conditions, phase: clusterPhase(previous.phase, conditions) };
}

function conditionUpdates(input: ClusterStatusInput, facts: ClusterFacts, state: string): ConditionUpdate[] {
  const { cluster } = input;
  const updates: ConditionUpdate[] = [];
  updates.push(profileCondition(input, facts));
  const version = facts.version;
  if (version) {
    updates.push(
      version.kind === "accepted"
        ? {
            type: CLUSTER_CONDITION_TYPES.versionSupported,
            status: "True",
            reason: version.deprecated ? CLUSTER_REASONS.DeprecatedVersion : "VersionSupported",
            message: version.deprecated
              ? `Kubernetes ${version.version} is deprecated in profile ${cluster.spec.profile}; plan an upgrade`
              : `Kubernetes ${version.version}`,
          }
        : {
            type: CLUSTER_CONDITION_TYPES.versionSupported,
            status: "False",
            reason: version.kind === "downgrade" ? REASONS.DowngradeNotAllowed : REASONS.UnsupportedVersion,
            message: version.message,
          },
    );
  }
  updates.push(clusterReadyCondition(input, facts, state));
  const hibernation = hibernationCondition(input, facts, state);
  if (hibernation) updates.push(hibernation);
  // The backend's own conditions, as it reports them (e.g. a Gardener Shoot's), while the cluster is not going away.
  if (input.observation.exists && !facts.deleting) updates.push(...(input.observation.conditions ?? []));
  if (facts.deleting) {
    updates.push(
      facts.foreignFinalizers.length > 0
        ? {
            type: CLUSTER_CONDITION_TYPES.deletionUnblocked,
            status: "False",
            reason: REASONS.WaitingForForeignFinalizers,
            message: `waiting for finalizers: ${facts.foreignFinalizers.join(", ")}`,
          }
        : {
            type: CLUSTER_CONDITION_TYPES.deletionUnblocked,
            status: "True",
            reason: REASONS.Deleting,
            message: "",
          },
    );
  }
  return updates;
}

/** ClusterReady of a Cluster on its way to sleep, asleep, or waking; undefined in any other state. */
function sleepReadyCondition(type: string, state: string, detail: string): ConditionUpdate | undefined {
  switch (state) {
    case "hibernating":
      return {
        type,
        status: "False",
        reason: HIBERNATION_REASONS.Hibernating,
        message: `putting the cluster to sleep${detail}`,
      };
    case "hibernated":
      return {
        type,
        status: "False",
        reason: HIBERNATION_REASONS.Hibernated,
        message: `asleep as asked (annotation ${HIBERNATE_ANNOTATION}); its endpoint and certificates are kept; set the annotation to "false" to wake it`,
      };
    case "waking":
      return {
        type,
        status: "False",
        reason: HIBERNATION_REASONS.Waking,
        message: `waking the cluster${detail}`,
      };
    default:
      return undefined;
  }
}

/**
 * Whether the Cluster sleeps or wakes as its hibernate annotation asks: True once it is as asked, False on the way
 * or when it cannot be (an invalid value, a backend that cannot hibernate). Only for a Cluster that was asked.
 */
export function hibernationCondition(
  input: ClusterStatusInput,
  facts: ClusterFacts,
  state: string,
): ConditionUpdate | undefined {
  const asked = facts.hibernation;
  // Never asked (no annotation, no condition from an earlier ask): no condition at all.
  const askedBefore = input.cluster.status?.conditions?.some((c) => c.type === HIBERNATION_CONDITION);
  if ((!asked && !askedBefore && !HIBERNATION_STATES.has(state)) || facts.deleting) return undefined;
  const type = HIBERNATION_CONDITION;
  const reasons = HIBERNATION_REASONS;
  if (asked?.invalid !== undefined)
    return {
      type,
      status: "False",
      reason: reasons.InvalidHibernationRequest,
      message: `annotation ${HIBERNATE_ANNOTATION} is "${asked.invalid}": give "true" (asleep) or "false" (awake)`,
    };
  if (asked?.wanted && !asked.offered)
    return {
      type,
      status: "False",
      reason: reasons.HibernationNotOffered,
      message: `the backend of profile ${input.cluster.spec.profile} cannot put clusters to sleep; remove annotation ${HIBERNATE_ANNOTATION}`,
    };
  switch (state) {
    case "hibernated":
      return { type, status: "True", reason: reasons.Hibernated, message: "asleep as asked" };
    case "hibernating":
      return { type, status: "False", reason: reasons.Hibernating, message: "going to sleep as asked" };
    case "waking":
      return { type, status: "False", reason: reasons.Waking, message: "waking as asked" };
    default:
      return asked?.wanted
        ? { type, status: "False", reason: reasons.Hibernating, message: "put to sleep once it is ready" }
        : { type, status: "True", reason: reasons.Awake, message: "awake as asked" };
  }
}

/** Whether the profile resolves; if not, the object to fix: the ProviderConfig that would publish it, or the spec. */
function profileCondition(input: ClusterStatusInput, facts: ClusterFacts): ConditionUpdate {
  const type = CLUSTER_CONDITION_TYPES.profileResolved;
  const profile = input.cluster.spec.profile;
  if (facts.profileFound) return { type, status: "True", reason: "ProfileFound", message: "" };
  const unpublished = input.unpublished;
  return unpublished
    ? {
        type,
        status: "False",
        reason: CLUSTER_REASONS.ProviderConfigNotReady,
        message: `ClusterProfile "${profile}" is not published: ProviderConfig "${unpublished.config}" is not Ready (${unpublished.reason}: ${unpublished.message}); fix the ProviderConfig (retrying)`,
      }
    : {
        type,
        status: "False",
        reason: REASONS.ProfileNotFound,
        message: `ClusterProfile "${profile}" does not exist; create it or fix spec.profile (retrying)`,
      };
}

function clusterReadyCondition(
  input: ClusterStatusInput,
  facts: ClusterFacts,
  state: string,
): ConditionUpdate {
  const type = CONDITION_TYPES.clusterReady;
  const backend = facts.backend;
  const detail = backendDetail(backend);
  if (state === "ready" && backend.exists) {
    // The machine stays Ready while the backend only reports it not serving (it may come back by itself); the
    // condition says so, and the phase follows it.
    const down = notServing(backend);
    return down === undefined
      ? {
          type,
          status: "True",
          reason: REASONS.Ready,
          message: `Kubernetes ${backend.version} at ${backend.endpoint ?? ""}`,
        }
      : lostCondition(type, "the cluster", { notServing: down });
  }
  if (input.lastError !== undefined) {
    return { type, status: "False", reason: REASONS.BackendError, message: input.lastError };
  }
  if (state.startsWith("deleting")) {
    return { type, status: "False", reason: REASONS.Deleting, message: `deleting the cluster${detail}` };
  }
  const sleeping = sleepReadyCondition(type, state, detail);
  if (sleeping) return sleeping;
  switch (state) {
    case "provisioning": {
      const missing = incompleteness(facts);
      return missing === undefined
        ? { type, status: "False", reason: REASONS.Provisioning, message: `creating the cluster${detail}` }
        : {
            type,
            status: "False",
            reason: CLUSTER_REASONS.Repairing,
            message: `the backend reports the cluster incomplete: ${missing}; creating what is missing`,
          };
    }
    case "updating":
      return { type, status: "False", reason: REASONS.Updating, message: `updating the cluster${detail}` };
    case "claimingPoolMember":
      return {
        type,
        status: "False",
        reason: REASONS.Provisioning,
        message: `claiming a cluster of warm pool ${facts.poolMember?.pool ?? ""}`,
      };
    case "takingOver": {
      // What the source engine published stands until this one can look: a move changes nothing to see.
      const published = input.cluster.status?.conditions?.find((condition) => condition.type === type);
      return published
        ? { type, status: published.status, reason: published.reason, message: published.message }
        : {
            type,
            status: "False",
            reason: CLUSTER_REASONS.TakingOver,
            message: "taking the cluster over from the hand-over of `openmcp-engine move`",
          };
    }
    case "failed":
      return {
        type,
        status: "False",
        reason:
          backend.exists && backend.phase === "failed" ? REASONS.BackendError : REASONS.ConfigurationProblem,
        message:
          facts.version && facts.version.kind !== "accepted"
            ? facts.version.message
            : `the backend reports the cluster failed${detail}`,
      };
    default:
      return {
        type,
        status: "False",
        reason: "Pending",
        message: facts.profileFound ? "waiting to create the cluster" : "waiting for the ClusterProfile",
      };
  }
}
