/** The pure reconcile step for a Cluster: (object, profile, observation, now) → next state, patches, commands, Events. */
import { Immer } from "immer";
import type { AnyMachineSnapshot } from "xstate";
import type { ClusterCommand, ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { Cluster, ClusterStatus } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import {
  ANNOTATIONS,
  CONDITION_TYPES,
  ENDPOINTS,
  FINALIZERS,
  LABELS,
  OPERATIONS,
  REASONS,
} from "../../api/constants.ts";
import { type ConditionUpdate, clusterPhase, mergeConditions } from "../shared/conditions.ts";
import { diff, type Json, type PatchOperation } from "../shared/json-patch.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { parseStateValue, stateValueToString } from "../shared/state-value.ts";
import { resolveVersion } from "./kubernetes-version.ts";
import { type ClusterEvent, type ClusterFacts, clusterMachine, type EventParams } from "./machine.ts";

const transition = pureTransition(clusterMachine);

// Our drafts never escape a step, so freezing them (immer's default) would only cost time on the hot path.
const { produce } = new Immer({ autoFreeze: false });

/** Whether this provider acts on a Cluster at all, decided before anything else (and before any backend call). */
export type ClusterResponsibility =
  /** Annotated `openmcp.cloud/operation: ignore`: skip entirely. */
  | "ignored"
  /** Its profile belongs to another provider: no write at all. */
  | "foreign"
  /** Its profile does not exist (yet); ours to report on, nothing to build. */
  | "profileMissing"
  | "ours";

/** Decides {@link ClusterResponsibility}. A Cluster holding our finalizer stays ours even if its profile went away. */
export function clusterResponsibility(
  cluster: Cluster,
  profile: ClusterProfile | undefined,
  providerName: string,
): ClusterResponsibility {
  if (cluster.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  if (profile) return profile.spec.providerRef.name === providerName ? "ours" : "foreign";
  return cluster.metadata.finalizers?.includes(FINALIZERS.cluster) ? "ours" : "profileMissing";
}

/** How often to look again, by situation. */
export interface ClusterTiming {
  /** While the backend works (provisioning, updating, deleting). */
  readonly pollMs: number;
  /** While the profile is missing. */
  readonly retryMs: number;
  /** When Ready, to notice drift at the backend. */
  readonly resyncMs: number;
}

/** Everything one step needs; all of it data. */
export interface ClusterStepInput {
  readonly cluster: Cluster;
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  /** The backend's view; `{ exists: false }` when it was not asked (not ours). */
  readonly observation: ClusterObservation;
  /** `spec.settings` of the Cluster's ProviderConfig, handed to the backend with every command. */
  readonly settings?: JsonObject;
  /** The version an unversioned Cluster gets (the ProviderConfig's defaultVersion); else the newest. */
  readonly defaultVersion?: string;
  /** Message of the last failed backend command for this Cluster, if the last attempt failed. */
  readonly lastError?: string;
  /** The current time (RFC 3339), used only for lastTransitionTime of changed conditions. */
  readonly now: string;
  readonly timing: ClusterTiming;
}

/** A Kubernetes Event to record about the Cluster. */
export type ClusterEventRecord = EventParams;

/** What the runtime must do after a step. Empty patches mean "no write". */
export interface ClusterStepResult {
  readonly responsibility: ClusterResponsibility;
  /** The machine state before the step (as read from the status). */
  readonly previousState: string;
  /** The event the machine was given (undefined when the Cluster was skipped): for inspectors and explanations. */
  readonly event: ClusterEvent | undefined;
  /** The machine state after the step, as written to `status.providerStatus.state` (e.g. `deleting.releasing`). */
  readonly state: string;
  /** Operations on metadata (finalizers, labels, annotations); apply before running commands. */
  readonly metadataPatch: readonly PatchOperation[];
  /** Operations on the status subresource. */
  readonly statusPatch: readonly PatchOperation[];
  /** Backend commands, in order; run only after the metadata patch succeeded. */
  readonly commands: readonly ClusterCommand[];
  readonly events: readonly ClusterEventRecord[];
  /** Look again after this long even without a change; undefined = wait for a change. */
  readonly requeueAfterMs: number | undefined;
}

/**
 * Flow: rebuild the machine's snapshot from `status.providerStatus.state` → derive the facts → one
 * `observed` event through `transition()` → translate the returned actions into patches, commands and
 * Events → compute the status the new state implies and diff it against the object's.
 *
 * Guarantees: pure and deterministic; a second step on an unchanged world yields no patch; foreign and
 * ignored Clusters yield nothing at all; the finalizer is added in the same step that first orders the
 * cluster, and removed only once the backend reports it gone.
 */
export function stepCluster(input: ClusterStepInput): ClusterStepResult {
  const { cluster, profile } = input;
  const responsibility = clusterResponsibility(cluster, profile, input.providerName);
  const previousState = readState(cluster);
  if (responsibility === "ignored" || responsibility === "foreign") {
    return {
      responsibility,
      previousState,
      event: undefined,
      state: previousState,
      metadataPatch: [],
      statusPatch: [],
      commands: [],
      events: [],
      requeueAfterMs: undefined,
    };
  }

  const facts = clusterFacts(input);
  const [snapshot, actions] = transition(restoreSnapshot(previousState), {
    type: "observed",
    facts,
  });
  const state = stateValueToString(snapshot.value);

  const target = clusterTarget(cluster, profile, input.settings);
  let finalizer: "add" | "remove" | undefined;
  const commands: ClusterCommand[] = [];
  const events: ClusterEventRecord[] = [];
  for (const action of actions) {
    const params = action.params as Record<string, unknown> | undefined;
    switch (action.type) {
      case "addFinalizer":
        finalizer = "add";
        break;
      case "removeFinalizer":
        finalizer = "remove";
        break;
      case "createCluster":
      case "updateCluster": {
        const version = params?.version;
        if (typeof version === "string") {
          commands.push({ kind: action.type === "createCluster" ? "create" : "update", target, version });
        }
        break;
      }
      case "deleteCluster":
        commands.push({ kind: "delete", target });
        break;
      case "recordEvent":
        events.push(params as unknown as EventParams);
        break;
    }
  }
  const created = commands.find((command) => command.kind === "create");
  const metadata = desiredMetadata(input, responsibility, facts, finalizer, created?.version);
  const status = desiredStatus(input, facts, state);
  return {
    responsibility,
    previousState,
    event: { type: "observed", facts },
    state,
    metadataPatch: diff({ metadata: cluster.metadata as Json }, { metadata: metadata as Json }),
    statusPatch: diff(cluster.status === undefined ? {} : { status: cluster.status as unknown as Json }, {
      status: status as unknown as Json,
    }),
    commands,
    events,
    requeueAfterMs: requeueFor(state, responsibility, input.timing),
  };
}

/** The facts of the world, level-based: nothing here depends on what happened before. */
export function clusterFacts(input: ClusterStepInput): ClusterFacts {
  const { cluster, profile, observation } = input;
  const finalizers = cluster.metadata.finalizers ?? [];
  const running = observation.exists ? observation.version : undefined;
  return {
    deleting: cluster.metadata.deletionTimestamp !== undefined,
    hasFinalizer: finalizers.includes(FINALIZERS.cluster),
    foreignFinalizers: finalizers.filter((name) => name !== FINALIZERS.cluster),
    profileFound: profile !== undefined,
    version: profile
      ? resolveVersion(
          cluster.spec.kubernetes?.version || input.defaultVersion,
          profile.spec.supportedVersions ?? [],
          running,
        )
      : undefined,
    // A backend that says "ready" without an endpoint is not ready: Ready always publishes an endpoint.
    backend:
      observation.exists && observation.phase === "ready" && !observation.endpoint
        ? { ...observation, phase: "provisioning" }
        : observation,
  };
}

function readState(cluster: Cluster): string {
  const state = cluster.status?.providerStatus?.state;
  return typeof state === "string" && state !== "" ? state : "pending";
}

/** Snapshots are immutable and the context is empty, so one per state value serves every Cluster. */
const snapshots = new Map<string, AnyMachineSnapshot>();

/** Rebuilds the snapshot from the persisted state; an unknown value (hand-edited status) restarts at pending. */
function restoreSnapshot(state: string): AnyMachineSnapshot {
  let snapshot = snapshots.get(state);
  if (!snapshot) {
    try {
      snapshot = clusterMachine.resolveState({ value: parseStateValue(state), context: {} });
    } catch {
      return restoreSnapshot("pending");
    }
    snapshots.set(state, snapshot);
  }
  return snapshot;
}

/** The backend's key and description of a Cluster. */
export function clusterTarget(
  cluster: Cluster,
  profile: ClusterProfile | undefined,
  settings?: JsonObject,
): ClusterTarget {
  return {
    ...(settings ? { settings } : {}),
    uid: cluster.metadata.uid ?? "",
    namespace: cluster.metadata.namespace ?? "",
    name: cluster.metadata.name ?? "",
    tenancy: cluster.spec.tenancy,
    profile: cluster.spec.profile,
    providerConfig: profile?.spec.providerConfigRef.name ?? "",
  };
}

function desiredMetadata(
  input: ClusterStepInput,
  responsibility: ClusterResponsibility,
  facts: ClusterFacts,
  finalizer: "add" | "remove" | undefined,
  ordered: string | undefined,
): Cluster["metadata"] {
  return produce(input.cluster.metadata, (draft) => {
    const finalizers = draft.finalizers ?? [];
    if (finalizer === "add" && !finalizers.includes(FINALIZERS.cluster)) {
      draft.finalizers = [...finalizers, FINALIZERS.cluster];
    }
    if (finalizer === "remove" && finalizers.includes(FINALIZERS.cluster)) {
      draft.finalizers = finalizers.filter((name) => name !== FINALIZERS.cluster);
    }
    if (draft.annotations?.[ANNOTATIONS.operation] === OPERATIONS.reconcile) {
      delete draft.annotations[ANNOTATIONS.operation]; // done: this reconcile is the one asked for
    }
    // Never label an object on its way out, nor one whose profile we cannot see (it may not be ours).
    if (finalizer === "remove" || facts.deleting || responsibility !== "ours") return;
    draft.labels ??= {};
    draft.labels[LABELS.provider] = input.providerName;
    // The version label shows what runs, or what is being built: set with the create, it saves a write.
    const version = input.observation.exists ? input.observation.version : ordered;
    if (version !== undefined) draft.labels[LABELS.k8sVersion] = version;
    if (input.observation.exists) {
      if (input.observation.info !== undefined) {
        draft.annotations ??= {};
        draft.annotations[ANNOTATIONS.providerInfo] = input.observation.info;
      }
    }
  });
}

function desiredStatus(input: ClusterStepInput, facts: ClusterFacts, state: string): ClusterStatus {
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
  const providerStatus: JsonObject = { ...previous?.providerStatus, state };
  const status: Record<string, unknown> = {
    ...previous,
    observedGeneration: generation,
    phase: clusterPhase(facts.deleting, conditions),
    conditions,
    providerStatus,
  };
  if (endpoint) {
    status.endpoints = [{ name: ENDPOINTS.external, url: endpoint }];
    status.apiServer = endpoint;
  } else if (!observation.exists) {
    delete status.endpoints;
    delete status.apiServer;
  }
  return status as unknown as ClusterStatus;
}

function conditionUpdates(input: ClusterStepInput, facts: ClusterFacts, state: string): ConditionUpdate[] {
  const { cluster } = input;
  const updates: ConditionUpdate[] = [];
  updates.push(
    facts.profileFound
      ? { type: CONDITION_TYPES.profileResolved, status: "True", reason: "ProfileFound", message: "" }
      : {
          type: CONDITION_TYPES.profileResolved,
          status: "False",
          reason: REASONS.ProfileNotFound,
          message: `ClusterProfile "${cluster.spec.profile}" does not exist; create it or fix spec.profile (retrying)`,
        },
  );
  const version = facts.version;
  if (version) {
    updates.push(
      version.kind === "accepted"
        ? {
            type: CONDITION_TYPES.versionSupported,
            status: "True",
            reason: version.deprecated ? REASONS.DeprecatedVersion : "VersionSupported",
            message: version.deprecated
              ? `Kubernetes ${version.version} is deprecated in profile ${cluster.spec.profile}; plan an upgrade`
              : `Kubernetes ${version.version}`,
          }
        : {
            type: CONDITION_TYPES.versionSupported,
            status: "False",
            reason: version.kind === "downgrade" ? REASONS.DowngradeNotAllowed : REASONS.UnsupportedVersion,
            message: version.message,
          },
    );
  }
  updates.push(clusterReadyCondition(input, facts, state));
  if (facts.deleting) {
    updates.push(
      facts.foreignFinalizers.length > 0
        ? {
            type: CONDITION_TYPES.deletionUnblocked,
            status: "False",
            reason: REASONS.WaitingForForeignFinalizers,
            message: `waiting for finalizers: ${facts.foreignFinalizers.join(", ")}`,
          }
        : { type: CONDITION_TYPES.deletionUnblocked, status: "True", reason: REASONS.Deleting, message: "" },
    );
  }
  return updates;
}

function clusterReadyCondition(input: ClusterStepInput, facts: ClusterFacts, state: string): ConditionUpdate {
  const type = CONDITION_TYPES.clusterReady;
  const backend = facts.backend;
  const detail = backend.exists
    ? ` (backend: ${backend.phase}${backend.message ? `, ${backend.message}` : ""})`
    : "";
  if (state === "ready" && backend.exists) {
    return {
      type,
      status: "True",
      reason: REASONS.Ready,
      message: `Kubernetes ${backend.version} at ${backend.endpoint ?? ""}`,
    };
  }
  if (input.lastError !== undefined) {
    return { type, status: "False", reason: REASONS.BackendError, message: input.lastError };
  }
  if (state.startsWith("deleting")) {
    return { type, status: "False", reason: REASONS.Deleting, message: `deleting the cluster${detail}` };
  }
  switch (state) {
    case "provisioning":
      return {
        type,
        status: "False",
        reason: REASONS.Provisioning,
        message: `creating the cluster${detail}`,
      };
    case "updating":
      return { type, status: "False", reason: REASONS.Updating, message: `updating the cluster${detail}` };
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

function requeueFor(
  state: string,
  responsibility: ClusterResponsibility,
  timing: ClusterTiming,
): number | undefined {
  if (responsibility === "profileMissing") return timing.retryMs;
  if (state === "provisioning" || state === "updating" || state === "deleting.releasing")
    return timing.pollMs;
  if (state === "ready") return timing.resyncMs;
  return undefined;
}
