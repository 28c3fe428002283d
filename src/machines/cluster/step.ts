/** The pure reconcile step for a Cluster: (object, profile, observation, now) → next state, desired object, commands, Events. */
import { Immer } from "immer";
import type { ClusterCommand, ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { Cluster, ClusterStatus } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { ANNOTATIONS, FINALIZERS, LABELS, OPERATIONS } from "../../api/constants.ts";
import { applyFinalizerWish, type FinalizerWish } from "../shared/finalizer.ts";
import type { EventRecord, MachineStep } from "../shared/machine-step.ts";
import { requeueDelay } from "../shared/machine-tags.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { snapshotRestorer } from "../shared/snapshots.ts";
import { stateValueToString } from "../shared/state-value.ts";
import { resolveVersion } from "./kubernetes-version.ts";
import { type ClusterEvent, type ClusterFacts, clusterMachine } from "./machine.ts";
import { desiredStatus } from "./status.ts";

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

/** What the runtime must do after a step: write `desired`, run the commands, record the Events. */
export interface ClusterStepResult extends MachineStep<Cluster["metadata"], ClusterStatus, ClusterCommand> {
  readonly responsibility: ClusterResponsibility;
  /** The event the machine was given (undefined when the Cluster was skipped): for inspectors and explanations. */
  readonly event: ClusterEvent | undefined;
}

const restore = snapshotRestorer(clusterMachine);

/**
 * Flow: rebuild the machine's snapshot from `status.providerStatus.state` → derive the facts → one
 * `observed` event through `transition()` → translate the returned actions into commands, Events and
 * the finalizer wish → the desired metadata and the status the new state implies.
 *
 * Guarantees: pure and deterministic; a second step on an unchanged world desires the object as it is;
 * foreign and ignored Clusters yield nothing at all; the finalizer is added in the same step that first
 * orders the cluster, and removed only once the backend reports it gone.
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
      desired: { metadata: cluster.metadata, status: cluster.status },
      commands: [],
      events: [],
      requeueAfterMs: undefined,
    };
  }

  const facts = clusterFacts(input);
  const [snapshot, actions] = transition(restore(previousState), { type: "observed", facts });
  const state = stateValueToString(snapshot.value);

  const target = clusterTarget(cluster, profile, input.settings);
  let finalizer: FinalizerWish;
  const commands: ClusterCommand[] = [];
  const events: EventRecord[] = [];
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
        events.push(params as unknown as EventRecord);
        break;
    }
  }
  const created = commands.find((command) => command.kind === "create");
  return {
    responsibility,
    previousState,
    event: { type: "observed", facts },
    state,
    desired: {
      metadata: desiredMetadata(input, responsibility, facts, finalizer, created?.version),
      status: desiredStatus(input, facts, state),
    },
    commands,
    events,
    requeueAfterMs: requeueDelay(snapshot, input.timing),
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
    ...(cluster.metadata.labels ? { labels: cluster.metadata.labels } : {}),
    ...(cluster.metadata.annotations ? { annotations: cluster.metadata.annotations } : {}),
  };
}

function desiredMetadata(
  input: ClusterStepInput,
  responsibility: ClusterResponsibility,
  facts: ClusterFacts,
  finalizer: FinalizerWish,
  ordered: string | undefined,
): Cluster["metadata"] {
  return produce(input.cluster.metadata, (draft) => {
    applyFinalizerWish(draft, FINALIZERS.cluster, finalizer);
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
