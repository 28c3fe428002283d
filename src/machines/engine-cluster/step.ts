/**
 * The pure reconcile step for an EngineCluster, on the generic step: (object, profile, observation, now)
 * → next state, desired object (metadata, the one spec field we own, status), commands, Events.
 */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import { type ApiEndpoint, CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { ANNOTATIONS, FINALIZERS, LABELS, OPERATIONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import {
  apiEndpointOf,
  type BackendOrder,
  backendClusterFacts,
  backendTarget,
} from "../cluster/backend-cluster.ts";
import { type ActionContext, kindStep, type StepBasics } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import { type EngineClusterFacts, engineClusterMachine } from "./machine.ts";
import { desiredEngineClusterStatus, pausedStatus } from "./status.ts";

/** Whether this engine acts on an EngineCluster, decided once, before anything else (and before any backend call). */
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

/**
 * Decides {@link EngineClusterResponsibility}, once, before anything else. One holding our finalizer
 * stays ours when it was marked externally managed after we built for it (or its profile went away),
 * so what was built can still be cleaned up. A profile of another provider makes it foreign even so:
 * every provider's engines use the same finalizer name. `openmcp.cloud/operation: ignore` lets go of
 * it, as it does of a Cluster.
 */
export function engineClusterResponsibility(
  cluster: EngineCluster,
  profile: ClusterProfile | undefined,
  providerName: string,
  ownerPaused: boolean,
): EngineClusterResponsibility {
  const annotations = cluster.metadata.annotations ?? {};
  if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  const ours = cluster.metadata.finalizers?.includes(FINALIZERS.engineCluster) ?? false;
  if (!ours && annotations[CAPI_ANNOTATIONS.managedBy] !== undefined) return "externallyManaged";
  if (profile && profile.spec.providerRef.name !== providerName) return "foreign";
  return pausedBy(cluster, ownerPaused) === undefined ? "ours" : "paused";
}

/** Everything one step of an EngineCluster that is ours (and not paused) needs; all of it data. */
export interface EngineClusterStepInput extends StepBasics {
  readonly cluster: EngineCluster;
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  readonly observation: EngineClusterObservation;
  /** The ProviderConfig's defaultVersion, for an EngineCluster that names none. */
  readonly defaultVersion?: string;
  readonly timing: RequeueTiming;
}

/** What the runtime does for an EngineCluster; the backend's target is the reconcile's own. No secret in any. */
export type EngineClusterCommand =
  | BackendOrder
  /** Write the kubeconfig Secret (when `kubeconfig`) and the ClusterEndpoint for `endpoint`. */
  | {
      readonly kind: "publish";
      readonly capiCluster: string;
      readonly endpoint: ApiEndpoint;
      readonly kubeconfig: boolean;
    }
  | { readonly kind: "unpublish"; readonly capiCluster: string | undefined };

/** The desired EngineCluster: metadata, the spec fields the machine owns, status. */
export type EngineClusterStepResult = MachineStep<
  EngineCluster["metadata"],
  EngineClusterStatus,
  EngineClusterCommand
>;

/** The backend's key for an EngineCluster: its own UID, so it never meets an openMCP Cluster's cluster. */
export function engineClusterTarget(
  cluster: EngineCluster,
  profile: ClusterProfile | undefined,
  settings?: JsonObject,
): ClusterTarget {
  return backendTarget(cluster, "Exclusive", profile, settings);
}

export { apiEndpointOf };

/** The facts of the world, level-based: nothing here depends on what happened before. */
export function engineClusterFacts(input: EngineClusterStepInput): EngineClusterFacts {
  const { cluster, observation } = input;
  const { kubeconfig, endpointCurrent } = observation.publication;
  return {
    ...backendClusterFacts(
      cluster,
      FINALIZERS.engineCluster,
      input.profile,
      input.defaultVersion,
      observation.backend,
    ),
    owner: owningCapiCluster(cluster.metadata),
    published: endpointCurrent && kubeconfig !== "missing",
  };
}

/** The endpoints a step works with: the one the contract publishes (the spec's once set), the backend's now. */
interface Endpoints {
  readonly endpoint: ApiEndpoint | undefined;
  readonly backendEndpoint: ApiEndpoint | undefined;
}

function endpointsOf({ input, facts }: ActionContext<EngineClusterStepInput, EngineClusterFacts>): Endpoints {
  const backendEndpoint = facts.backend.exists ? apiEndpointOf(facts.backend.endpoint) : undefined;
  return { endpoint: input.cluster.spec.controlPlaneEndpoint ?? backendEndpoint, backendEndpoint };
}

/**
 * One step of an EngineCluster that is ours and not paused. Guarantees (besides the generic step's): no
 * command before a CAPI Cluster owns the object; the finalizer is stored with the first create; the
 * endpoint in the spec is written once and never changed; `provisioned` only with that endpoint.
 */
export const stepEngineCluster: (input: EngineClusterStepInput) => EngineClusterStepResult = kindStep<
  EngineClusterStepInput,
  EngineCluster,
  EngineClusterFacts,
  EngineClusterCommand,
  EngineClusterStatus,
  Endpoints & { readonly provisioned: boolean }
>({
  machine: engineClusterMachine,
  object: (input) => input.cluster,
  readState: readEngineClusterState,
  facts: engineClusterFacts,
  finalizer: FINALIZERS.engineCluster,
  actions: {
    // Only what the backend does not hold yet: after a restart mid-provisioning, the cluster is adopted.
    createCluster: (params, { facts }) =>
      typeof params?.version === "string" && !facts.backend.exists
        ? { kind: "create", version: params.version }
        : undefined,
    deleteCluster: () => ({ kind: "delete" }),
    publish: (_, context) => {
      const { endpoint } = endpointsOf(context);
      const owner = context.facts.owner;
      if (!owner || !endpoint) return undefined;
      const kubeconfig = context.input.observation.publication.kubeconfig;
      return {
        kind: "publish",
        capiCluster: owner,
        endpoint,
        kubeconfig: kubeconfig === "missing" || kubeconfig === "current",
      };
    },
    unpublish: (_, { facts }) => ({ kind: "unpublish", capiCluster: facts.owner }),
  },
  derive: (transitioned) => {
    const endpoints = endpointsOf(transitioned);
    return {
      ...endpoints,
      provisioned: transitioned.state === "provisioned" && endpoints.endpoint !== undefined,
    };
  },
  metadata(draft, { input, facts, finalizer }) {
    if (finalizer === "remove" || facts.deleting || !input.profile) return;
    draft.labels ??= {};
    draft.labels[LABELS.provider] = input.providerName;
  },
  spec: ({ input }, { provisioned, endpoint }) =>
    input.cluster.spec.controlPlaneEndpoint === undefined && provisioned && endpoint
      ? { controlPlaneEndpoint: endpoint }
      : undefined,
  status: ({ input, facts, state, phase }, { provisioned, endpoint, backendEndpoint }) =>
    desiredEngineClusterStatus({
      cluster: input.cluster,
      facts,
      state,
      phase,
      provisioned,
      endpoint,
      backendEndpoint,
      ...(input.lastError === undefined ? {} : { lastError: input.lastError }),
      now: input.now,
    }),
});

/** The machine state an EngineCluster stores in `status.state`. */
export function readEngineClusterState(cluster: EngineCluster): string {
  const state = cluster.status?.state;
  return typeof state === "string" && state !== "" ? state : "pending";
}

/**
 * The step of a paused EngineCluster (it or its CAPI Cluster): the machine does not move, nothing is
 * ordered, only the Paused condition says so and why.
 */
export function stepPausedEngineCluster(input: {
  readonly cluster: EngineCluster;
  /** Why it is paused ({@link pausedBy}). */
  readonly why: string;
  readonly now: string;
}): EngineClusterStepResult {
  const { cluster } = input;
  const state = readEngineClusterState(cluster);
  return {
    previousState: state,
    event: undefined,
    state,
    desired: { metadata: cluster.metadata, status: pausedStatus(cluster, input.why, input.now) },
    commands: [],
    events: [],
    requeueAfterMs: undefined,
  };
}
