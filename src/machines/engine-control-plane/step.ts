/**
 * The pure reconcile step for an EngineControlPlane, on the one generic step (`kindStep`): only what is
 * the kind's own — responsibility (paused, ignored, foreign), where its state is stored, its facts, what
 * each action orders, the spec field it owns and its status.
 */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import { CAPI_ANNOTATIONS, type CapiCluster, owningCapiCluster } from "../../api/cluster-api.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import {
  ENGINE_CONTROL_PLANE_FINALIZER,
  type EngineControlPlane,
  type EngineControlPlaneStatus,
} from "../../api/engine-control-plane.ts";
import { type BackendOrder, backendClusterFacts, backendTarget } from "../cluster/backend-cluster.ts";
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
import { kindStep, type StepBasics, type Transitioned } from "../shared/kind-step.ts";
import type { MachineStep } from "../shared/machine-step.ts";
import { type EngineControlPlaneFacts, engineControlPlaneMachine } from "./machine.ts";
import { desiredEngineControlPlaneStatus, pausedControlPlaneStatus } from "./status.ts";

/** Whether this engine acts on an EngineControlPlane, decided before anything else (and before any backend call). */
export type EngineControlPlaneResponsibility =
  /** Annotated `openmcp.cloud/operation: ignore`: no write at all. */
  | "ignored"
  /** Its profile belongs to another provider, or is missing and not named like ours: no write at all. */
  | "foreign"
  /** It or its CAPI Cluster is paused: only the Paused condition is written, nothing else happens. */
  | "paused"
  | "ours";

/** What the runtime saw of the objects the step publishes. */
export interface ControlPlanePublication {
  /**
   * The `<cluster>-kubeconfig` Secret: ours and holding the backend's current admin credentials, ours but
   * behind them (rotated at the backend), absent, someone else's, or not wanted (no admin access).
   */
  readonly kubeconfig: "current" | "stale" | "missing" | "notOurs" | "notWanted";
  /** The ClusterEndpoint holds the published endpoint. */
  readonly endpointCurrent: boolean;
}

/** What one look at the world found. */
export interface EngineControlPlaneObservation {
  /** The backend's view; `{ exists: false }` when it was not asked (no owner yet, not ours). */
  readonly backend: ClusterObservation;
  readonly publication: ControlPlanePublication;
}

/** Everything one step needs; all of it data. */
export interface EngineControlPlaneStepInput extends StepBasics {
  readonly controlPlane: EngineControlPlane;
  /** The CAPI Cluster that owns it, as the cache holds it; undefined until CAPI sets the ownerReference. */
  readonly owner: CapiCluster | undefined;
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  readonly observation: EngineControlPlaneObservation;
}

/**
 * What the runtime does for an EngineControlPlane: the backend orders every cluster-holding kind gives (the
 * runtime knows the target), and publishing. Commands carry no secret: the runtime fetches access when it writes.
 */
export type EngineControlPlaneCommand = BackendOrder | PublicationCommand;

/** The desired EngineControlPlane: metadata, the spec field the machine owns, status. */
export type EngineControlPlaneStepResult = MachineStep<
  EngineControlPlane["metadata"],
  EngineControlPlaneStatus,
  EngineControlPlaneCommand
>;

/** The machine state an EngineControlPlane stores in `status.state`. */
export function readEngineControlPlaneState(controlPlane: EngineControlPlane): string {
  return readStoredState(controlPlane);
}

/** The backend's key for an EngineControlPlane: its own UID, so it never meets another object's cluster. */
export function engineControlPlaneTarget(
  controlPlane: EngineControlPlane,
  profile: ClusterProfile | undefined,
  settings?: JsonObject,
): ClusterTarget {
  return backendTarget(controlPlane, "Exclusive", profile, settings);
}

/** Why a paused EngineControlPlane is paused, or undefined when it is not (the contract's two ways). */
export function controlPlanePausedBy(
  controlPlane: EngineControlPlane,
  owner: CapiCluster | undefined,
): string | undefined {
  if (controlPlane.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined) {
    return `annotation ${CAPI_ANNOTATIONS.paused} is set`;
  }
  return owner?.spec?.paused === true ? `Cluster ${owner.metadata.name} has spec.paused: true` : undefined;
}

/** Decides {@link EngineControlPlaneResponsibility}. One holding our finalizer stays ours even if its profile went away. */
export function engineControlPlaneResponsibility(
  controlPlane: EngineControlPlane,
  profile: ClusterProfile | undefined,
  claimant: ProfileClaimant,
  owner: CapiCluster | undefined,
): EngineControlPlaneResponsibility {
  if (controlPlane.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  const reference = profileReference(
    { profileName: controlPlane.spec.profile, labels: controlPlane.metadata.labels },
    profile,
    claimant,
  );
  if (reference === "foreign") return "foreign";
  return controlPlanePausedBy(controlPlane, owner) === undefined ? "ours" : "paused";
}

/** The facts of the world, level-based: nothing here depends on what happened before. */
export function engineControlPlaneFacts(input: EngineControlPlaneStepInput): EngineControlPlaneFacts {
  const { controlPlane, observation } = input;
  const owner = owningCapiCluster(controlPlane.metadata);
  const { kubeconfig, endpointCurrent } = observation.publication;
  return {
    // spec.version is required by the CRD: no default version applies.
    ...backendClusterFacts(
      { metadata: controlPlane.metadata, spec: { kubernetes: { version: controlPlane.spec.version } } },
      ENGINE_CONTROL_PLANE_FINALIZER,
      input.profile,
      undefined,
      observation.backend,
    ),
    owner,
    infrastructureReady:
      owner !== undefined &&
      input.owner?.metadata.name === owner &&
      input.owner.status?.initialization?.infrastructureProvisioned === true,
    published:
      endpointCurrent && (kubeconfig === "current" || kubeconfig === "notOurs" || kubeconfig === "notWanted"),
  };
}

/** What the kind derives once per step: the endpoints, and whether the control plane is initialized. */
interface Derived extends PublishedEndpoints {
  readonly initialized: boolean;
}

type Step = Transitioned<EngineControlPlaneStepInput, EngineControlPlaneFacts, EngineControlPlaneCommand>;

const endpointsOf = (input: EngineControlPlaneStepInput, facts: EngineControlPlaneFacts) =>
  publishedEndpoints(input.controlPlane.spec.controlPlaneEndpoint, facts);

const step = kindStep<
  EngineControlPlaneStepInput,
  EngineControlPlane,
  EngineControlPlaneFacts,
  EngineControlPlaneCommand,
  EngineControlPlaneStatus,
  Derived
>({
  machine: engineControlPlaneMachine,
  object: (input) => input.controlPlane,
  readState: readEngineControlPlaneState,
  facts: engineControlPlaneFacts,
  finalizer: ENGINE_CONTROL_PLANE_FINALIZER,
  actions: {
    ...capiOwnedCommands,
    updateCluster: (params) =>
      typeof params?.version === "string" ? { kind: "update", version: params.version } : undefined,
    publish: (_, { facts, input }) =>
      publishCommand(
        facts.owner,
        endpointsOf(input, facts).endpoint,
        input.observation.publication.kubeconfig,
      ),
  },
  derive: ({ input, facts, state }) => {
    const endpoints = endpointsOf(input, facts);
    return { ...endpoints, initialized: state.startsWith("running") && endpoints.endpoint !== undefined };
  },
  metadata: labelWithProvider,
  // The endpoint is written once, when the control plane is first initialized; CEL refuses any change.
  spec: ({ input }, derived) =>
    input.controlPlane.spec.controlPlaneEndpoint === undefined && derived.initialized && derived.endpoint
      ? { controlPlaneEndpoint: derived.endpoint }
      : undefined,
  status: (transitioned: Step, derived) =>
    desiredEngineControlPlaneStatus({
      controlPlane: transitioned.input.controlPlane,
      facts: transitioned.facts,
      state: transitioned.state,
      phase: transitioned.phase,
      initialized: derived.initialized,
      endpoint: derived.endpoint,
      backendEndpoint: derived.backendEndpoint,
      ...(transitioned.input.lastError === undefined ? {} : { lastError: transitioned.input.lastError }),
      now: transitioned.input.now,
    }),
});

/**
 * One step of an EngineControlPlane that is ours and not paused (`open` decides that first).
 *
 * Guarantees (besides the generic step's): no command before a CAPI Cluster owns the object and reports its
 * infrastructure; the finalizer is stored with the first create; the endpoint in the spec is written once and
 * never changed; `controlPlaneInitialized` only with that endpoint, and never taken back; a downgrade is never
 * ordered.
 */
export const stepEngineControlPlane: (input: EngineControlPlaneStepInput) => EngineControlPlaneStepResult =
  step;

/**
 * The step of a paused EngineControlPlane (it or its CAPI Cluster): the machine does not move, nothing is
 * ordered, only the Paused condition says so and why.
 */
export function stepPausedEngineControlPlane(input: {
  readonly controlPlane: EngineControlPlane;
  /** Why it is paused ({@link controlPlanePausedBy}). */
  readonly why: string;
  readonly now: string;
}): EngineControlPlaneStepResult {
  return pausedStep(input.controlPlane, pausedControlPlaneStatus(input.controlPlane, input.why, input.now));
}
