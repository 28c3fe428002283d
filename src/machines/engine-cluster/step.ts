/**
 * The pure reconcile step for an EngineCluster: (object, owner, profile, observation, now) → next
 * state, desired object (metadata, the one spec field we own, status), commands, Events.
 */
import { Immer } from "immer";
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import { type ApiEndpoint, CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { ANNOTATIONS, FINALIZERS, LABELS, OPERATIONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import { resolveVersion } from "../cluster/kubernetes-version.ts";
import { applyFinalizerWish, type FinalizerWish } from "../shared/finalizer.ts";
import type { EventRecord, MachineStep } from "../shared/machine-step.ts";
import { type RequeueTiming, requeueDelay, taggedPhase } from "../shared/machine-tags.ts";
import { pureTransition } from "../shared/pure-transition.ts";
import { snapshotRestorer } from "../shared/snapshots.ts";
import { stateValueToString } from "../shared/state-value.ts";
import { type EngineClusterEvent, type EngineClusterFacts, engineClusterMachine } from "./machine.ts";
import { desiredEngineClusterStatus, pausedStatus } from "./status.ts";

const transition = pureTransition(engineClusterMachine);
const restore = snapshotRestorer(engineClusterMachine);
const { produce } = new Immer({ autoFreeze: false });

/** Whether this engine acts on an EngineCluster, decided before anything else (and before any backend call). */
export type EngineClusterResponsibility =
  /** Annotated `cluster.x-k8s.io/managed-by`: someone else manages the infrastructure; no write at all. */
  | "externallyManaged"
  /** Annotated `openmcp.cloud/operation: ignore`: no write at all. */
  | "ignored"
  /** Its profile belongs to another provider: no write at all. */
  | "foreign"
  /** It or its CAPI Cluster is paused: only the Paused condition is written, nothing else happens. */
  | "paused"
  | "ours";

/** What the runtime saw of the objects the step publishes. */
export interface Publication {
  /** The `<cluster>-kubeconfig` Secret: ours and present, absent, someone else's, or not wanted (no admin access). */
  readonly kubeconfig: "current" | "missing" | "notOurs" | "notWanted";
  /** The ClusterEndpoint holds the backend's endpoint. */
  readonly endpointCurrent: boolean;
}

/** What one look at the world found. */
export interface EngineClusterObservation {
  /** The backend's view; `{ exists: false }` when it was not asked (no owner yet, not ours). */
  readonly backend: ClusterObservation;
  readonly publication: Publication;
}

/** Why a paused EngineCluster is paused, or undefined when it is not. */
export function pausedBy(cluster: EngineCluster, ownerPaused: boolean): string | undefined {
  if (cluster.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined) {
    return `annotation ${CAPI_ANNOTATIONS.paused} is set`;
  }
  return ownerPaused ? `Cluster ${owningCapiCluster(cluster.metadata)} has spec.paused: true` : undefined;
}

/** Decides {@link EngineClusterResponsibility}. One holding our finalizer stays ours even if its profile went away. */
export function engineClusterResponsibility(
  cluster: EngineCluster,
  profile: ClusterProfile | undefined,
  providerName: string,
  ownerPaused: boolean,
): EngineClusterResponsibility {
  const annotations = cluster.metadata.annotations ?? {};
  if (annotations[CAPI_ANNOTATIONS.managedBy] !== undefined) return "externallyManaged";
  if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  if (profile && profile.spec.providerRef.name !== providerName) return "foreign";
  return pausedBy(cluster, ownerPaused) === undefined ? "ours" : "paused";
}

/** Everything one step needs; all of it data. */
export interface EngineClusterStepInput {
  readonly cluster: EngineCluster;
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  /** The owning CAPI Cluster has `spec.paused: true`. */
  readonly ownerPaused: boolean;
  readonly observation: EngineClusterObservation;
  /** `spec.settings` of the profile's ProviderConfig, handed to the backend with every command. */
  readonly settings?: JsonObject;
  /** The ProviderConfig's defaultVersion, for an EngineCluster that names none. */
  readonly defaultVersion?: string;
  readonly lastError?: string;
  /** RFC 3339, only for condition transition times. */
  readonly now: string;
  readonly timing: RequeueTiming;
}

/** What the runtime does for an EngineCluster. Commands carry no secret: the runtime fetches access when it writes. */
export type EngineClusterCommand =
  | { readonly kind: "create"; readonly target: ClusterTarget; readonly version: string }
  | { readonly kind: "delete"; readonly target: ClusterTarget }
  /** Write the kubeconfig Secret (when `kubeconfig`) and the ClusterEndpoint for `endpoint`. */
  | {
      readonly kind: "publish";
      readonly target: ClusterTarget;
      readonly capiCluster: string;
      readonly endpoint: ApiEndpoint;
      readonly kubeconfig: boolean;
    }
  | { readonly kind: "unpublish"; readonly capiCluster: string | undefined };

/** The desired EngineCluster: metadata, the spec fields the machine owns, status. */
export interface EngineClusterStepResult
  extends MachineStep<EngineCluster["metadata"], EngineClusterStatus, EngineClusterCommand> {
  readonly responsibility: EngineClusterResponsibility;
}

/** The backend's key for an EngineCluster: its own UID, so it never meets an openMCP Cluster's cluster. */
export function engineClusterTarget(
  cluster: EngineCluster,
  profile: ClusterProfile | undefined,
  settings?: JsonObject,
): ClusterTarget {
  return {
    ...(settings ? { settings } : {}),
    uid: cluster.metadata.uid ?? "",
    namespace: cluster.metadata.namespace ?? "",
    name: cluster.metadata.name ?? "",
    tenancy: "Exclusive",
    profile: cluster.spec.profile,
    providerConfig: profile?.spec.providerConfigRef.name ?? "",
  };
}

/** `https://host:port` → the contract's {host, port}; undefined for anything else. */
export function apiEndpointOf(url: string | undefined): ApiEndpoint | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const port = parsed.port === "" ? (parsed.protocol === "http:" ? 80 : 443) : Number(parsed.port);
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    return host === "" ? undefined : { host, port };
  } catch {
    return undefined;
  }
}

/**
 * Flow: responsibility first (externally managed, ignored, foreign: nothing; paused: the Paused
 * condition only) → facts → one `observed` event through `transition()` → commands, Events, finalizer
 * wish → desired metadata, spec (controlPlaneEndpoint, set once) and status.
 *
 * Guarantees: pure and deterministic; a second step on an unchanged world desires the object as it is;
 * no command before a CAPI Cluster owns the object; the finalizer is stored with the first create; the
 * endpoint in the spec is written once and never changed; `provisioned` only with that endpoint.
 */
export function stepEngineCluster(input: EngineClusterStepInput): EngineClusterStepResult {
  const { cluster, profile } = input;
  const responsibility = engineClusterResponsibility(cluster, profile, input.providerName, input.ownerPaused);
  const previousState = readState(cluster);
  if (responsibility !== "ours") {
    const status =
      responsibility === "paused"
        ? pausedStatus(cluster, pausedBy(cluster, input.ownerPaused) ?? "", input.now)
        : cluster.status;
    return {
      responsibility,
      previousState,
      event: undefined,
      state: previousState,
      desired: { metadata: cluster.metadata, status },
      commands: [],
      events: [],
      requeueAfterMs: undefined,
    };
  }

  const facts = engineClusterFacts(input);
  const event: EngineClusterEvent = { type: "observed", facts };
  const [snapshot, actions] = transition(restore(previousState), event);
  const state = stateValueToString(snapshot.value);
  const target = engineClusterTarget(cluster, profile, input.settings);
  const backendEndpoint = facts.backend.exists ? apiEndpointOf(facts.backend.endpoint) : undefined;
  // The endpoint the contract publishes: the one in the spec once set, never another.
  const endpoint = cluster.spec.controlPlaneEndpoint ?? backendEndpoint;
  const owner = facts.owner;

  let finalizer: FinalizerWish;
  const commands: EngineClusterCommand[] = [];
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
        // Only what the backend does not hold yet: after a restart mid-provisioning, the cluster is adopted.
        if (typeof params?.version === "string" && !facts.backend.exists) {
          commands.push({ kind: "create", target, version: params.version });
        }
        break;
      case "deleteCluster":
        commands.push({ kind: "delete", target });
        break;
      case "publish":
        if (owner && endpoint) {
          const kubeconfig = input.observation.publication.kubeconfig;
          commands.push({
            kind: "publish",
            target,
            capiCluster: owner,
            endpoint,
            kubeconfig: kubeconfig === "missing" || kubeconfig === "current",
          });
        }
        break;
      case "unpublish":
        commands.push({ kind: "unpublish", capiCluster: owner });
        break;
      case "recordEvent":
        events.push(params as unknown as EventRecord);
        break;
    }
  }

  const provisioned = state === "provisioned" && endpoint !== undefined;
  const ownsEndpoint = cluster.spec.controlPlaneEndpoint === undefined && provisioned;
  return {
    responsibility,
    previousState,
    event,
    state,
    desired: {
      metadata: desiredMetadata(input, facts, finalizer),
      ...(ownsEndpoint && endpoint ? { spec: { controlPlaneEndpoint: endpoint } } : {}),
      status: desiredEngineClusterStatus({
        cluster,
        facts,
        state,
        phase: taggedPhase(snapshot),
        provisioned,
        endpoint,
        backendEndpoint,
        ...(input.lastError === undefined ? {} : { lastError: input.lastError }),
        now: input.now,
      }),
    },
    commands,
    events,
    requeueAfterMs: requeueDelay(snapshot, input.timing),
  };
}

/** The facts of the world, level-based: nothing here depends on what happened before. */
export function engineClusterFacts(input: EngineClusterStepInput): EngineClusterFacts {
  const { cluster, profile, observation } = input;
  const finalizers = cluster.metadata.finalizers ?? [];
  const backend = observation.backend;
  const running = backend.exists ? backend.version : undefined;
  const version = profile
    ? resolveVersion(
        cluster.spec.kubernetes?.version ?? input.defaultVersion,
        profile.spec.supportedVersions,
        running,
      )
    : undefined;
  const { kubeconfig, endpointCurrent } = observation.publication;
  return {
    deleting: cluster.metadata.deletionTimestamp !== undefined,
    hasFinalizer: finalizers.includes(FINALIZERS.engineCluster),
    foreignFinalizers: finalizers.filter((name) => name !== FINALIZERS.engineCluster),
    owner: owningCapiCluster(cluster.metadata),
    profileFound: profile !== undefined,
    version,
    // "ready" without an endpoint is not ready for the contract: nothing could be published.
    backend:
      backend.exists && backend.phase === "ready" && apiEndpointOf(backend.endpoint) === undefined
        ? { ...backend, phase: "provisioning" }
        : backend,
    published: endpointCurrent && kubeconfig !== "missing",
  };
}

function readState(cluster: EngineCluster): string {
  const state = cluster.status?.state;
  return typeof state === "string" && state !== "" ? state : "pending";
}

function desiredMetadata(
  input: EngineClusterStepInput,
  facts: EngineClusterFacts,
  finalizer: FinalizerWish,
): EngineCluster["metadata"] {
  return produce(input.cluster.metadata, (draft) => {
    applyFinalizerWish(draft, FINALIZERS.engineCluster, finalizer);
    if (draft.annotations?.[ANNOTATIONS.operation] === OPERATIONS.reconcile) {
      delete draft.annotations[ANNOTATIONS.operation];
    }
    if (finalizer === "remove" || facts.deleting || !input.profile) return;
    draft.labels ??= {};
    draft.labels[LABELS.provider] = input.providerName;
  });
}
