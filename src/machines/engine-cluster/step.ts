/**
 * The pure reconcile step for an EngineCluster, on the generic step: (object, profile, observation, now)
 * → next state, desired object (metadata, the one spec field we own, status), commands, Events.
 */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import { CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { ANNOTATIONS, FINALIZERS, OPERATIONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import {
  apiEndpointOf,
  type BackendOrder,
  backendClusterFacts,
  backendTarget,
} from "../cluster/backend-cluster.ts";
import {
  capiOwnedCommands,
  labelWithProvider,
  type PublicationCommand,
  type PublishedEndpoints,
  pausedStep,
  publishCommand,
  publishedEndpoints,
  readStoredState,
} from "../cluster/capi-owned-step.ts";
import { type ProfileClaimant, profileReference } from "../cluster-profile/profile-reference.ts";
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
  /** Its profile belongs to another provider, or is missing and not named like ours: no write at all. */
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
  claimant: ProfileClaimant,
  ownerPaused: boolean,
): EngineClusterResponsibility {
  const annotations = cluster.metadata.annotations ?? {};
  if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  const ours = cluster.metadata.finalizers?.includes(FINALIZERS.engineCluster) ?? false;
  if (!ours && annotations[CAPI_ANNOTATIONS.managedBy] !== undefined) return "externallyManaged";
  const reference = profileReference(
    { profileName: cluster.spec.profile, labels: cluster.metadata.labels },
    profile,
    claimant,
  );
  if (reference === "foreign") return "foreign";
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
export type EngineClusterCommand = BackendOrder | PublicationCommand;

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

function endpointsOf({
  input,
  facts,
}: ActionContext<EngineClusterStepInput, EngineClusterFacts>): PublishedEndpoints {
  return publishedEndpoints(input.cluster.spec.controlPlaneEndpoint, facts);
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
  PublishedEndpoints & { readonly provisioned: boolean }
>({
  machine: engineClusterMachine,
  object: (input) => input.cluster,
  readState: readEngineClusterState,
  facts: engineClusterFacts,
  finalizer: FINALIZERS.engineCluster,
  actions: {
    ...capiOwnedCommands,
    publish: (_, context) =>
      publishCommand(
        context.facts.owner,
        endpointsOf(context).endpoint,
        context.input.observation.publication.kubeconfig,
      ),
  },
  derive: (transitioned) => {
    const endpoints = endpointsOf(transitioned);
    return {
      ...endpoints,
      provisioned: transitioned.state === "provisioned" && endpoints.endpoint !== undefined,
    };
  },
  metadata: labelWithProvider,
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
  return readStoredState(cluster);
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
  return pausedStep(input.cluster, pausedStatus(input.cluster, input.why, input.now));
}
