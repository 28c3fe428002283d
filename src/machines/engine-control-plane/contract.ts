/**
 * The EngineControlPlane's contract with Cluster API (the v1beta2 ControlPlane contract for a managed control
 * plane): what makes it one of the CAPI-owned family and what is its own — its object's shape (a required
 * spec.version), its owner's infrastructure, its Available, Ready, UpToDate and RollingOut conditions and
 * status fields, its words. The step, status and explanation are the family's recipes (`capi-owned/`).
 */
import type { CapiCluster } from "../../api/cluster-api.ts";
import { REASONS } from "../../api/constants.ts";
import {
  capiVersion,
  ENGINE_CONTROL_PLANE_CONDITIONS,
  ENGINE_CONTROL_PLANE_FINALIZER,
  type EngineControlPlane,
  type EngineControlPlaneStatus,
} from "../../api/engine-control-plane.ts";
import type { CapiOwnedStepInput, CapiOwnedStepResult } from "../capi-owned/contract.ts";
import { capiOwnedGuardPhrases, explainCapiOwned } from "../capi-owned/explain.ts";
import { type CapiOwnedStatusInput, versionReason } from "../capi-owned/status.ts";
import { capiOwnedSteps } from "../capi-owned/step.ts";
import type { ConditionUpdate } from "../shared/conditions.ts";
import type { Explanation } from "../shared/explanation.ts";
import { type EngineControlPlaneFacts, engineControlPlaneMachine } from "./machine.ts";

/** Reasons of the EngineControlPlane's own conditions beyond the shared {@link REASONS}. */
export const ENGINE_CONTROL_PLANE_REASONS = {
  /** Its Cluster's infrastructure is not provisioned yet (only with an infrastructureRef). */
  WaitingForInfrastructure: "WaitingForInfrastructure",
  Available: "Available",
  UpToDate: "UpToDate",
  RollingOut: "RollingOut",
  NotRollingOut: "NotRollingOut",
} as const;

const { available, ready, upToDate, rollingOut } = ENGINE_CONTROL_PLANE_CONDITIONS;

/** Everything one step needs; all of it data. */
export interface EngineControlPlaneStepInput extends CapiOwnedStepInput<"controlPlane", EngineControlPlane> {
  /** The CAPI Cluster that owns it, as the cache holds it; undefined until CAPI sets the ownerReference. */
  readonly owner: CapiCluster | undefined;
}

/** The desired EngineControlPlane: metadata, the spec field the machine owns, status. */
export type EngineControlPlaneStepResult = CapiOwnedStepResult<EngineControlPlane, EngineControlPlaneStatus>;

type StatusInput = CapiOwnedStatusInput<EngineControlPlane, EngineControlPlaneFacts>;

const steps = capiOwnedSteps<{
  key: "controlPlane";
  object: EngineControlPlane;
  status: EngineControlPlaneStatus;
  facts: EngineControlPlaneFacts;
  input: EngineControlPlaneStepInput;
  owner: CapiCluster | undefined;
}>({
  key: "controlPlane",
  machine: engineControlPlaneMachine,
  servingState: "running",
  finalizer: ENGINE_CONTROL_PLANE_FINALIZER,
  // Cluster API's managed-by annotation is the InfraCluster contract's, not the ControlPlane's.
  honoursManagedBy: false,
  // Required by the CRD: the runtime gives it no default version.
  requestedVersion: (controlPlane) => controlPlane.spec.version,
  ownFacts: (input, owner) => ({
    infrastructureReady:
      owner !== undefined &&
      input.owner?.metadata.name === owner &&
      input.owner.status?.initialization?.infrastructureProvisioned === true,
  }),
  ownerPause: (_, owner) => ({ paused: owner?.spec?.paused === true, name: owner?.metadata.name }),
  status: {
    kind: "EngineControlPlane",
    what: "the control plane",
    condition: available,
    servingReason: ENGINE_CONTROL_PLANE_REASONS.Available,
    ref: "controlPlaneRef",
    initialized: "controlPlaneInitialized",
    waitingForOwner: (facts) =>
      facts.infrastructureReady
        ? undefined
        : {
            reason: ENGINE_CONTROL_PLANE_REASONS.WaitingForInfrastructure,
            message: `waiting for Cluster ${facts.owner} to report status.initialization.infrastructureProvisioned`,
          },
    // v1beta1 spelled the signal `initialized` and readiness `ready`; the marker says no Machines, no Nodes.
    signals: (initialized, availableNow) => ({
      initialized,
      ready: availableNow.status === "True",
      externalManagedControlPlane: true,
    }),
    conditions: (input, availableNow) => [
      readyCondition(input, availableNow),
      upToDateCondition(input),
      rollingOutCondition(input),
    ],
    backendFields: (previous, backend) => {
      if (!backend.exists || backend.phase === "provisioning") return {};
      const version = capiVersion(backend.version);
      return {
        version,
        versions:
          previous?.versions?.length === 1 && previous.versions[0]?.version === version
            ? previous.versions
            : [{ version }],
      };
    },
  },
});

/** Ready: available and at rest on the version asked for. */
function readyCondition(input: StatusInput, availableNow: ConditionUpdate): ConditionUpdate {
  if (availableNow.status !== "True") return { ...availableNow, type: ready };
  const notAtRest = upToDateCondition(input);
  return notAtRest.status === "True"
    ? { type: ready, status: "True", reason: REASONS.Ready, message: availableNow.message }
    : { ...notAtRest, type: ready };
}

/** UpToDate: the running version is the one spec.version resolves to; False says why (upgrading, refused). */
function upToDateCondition(input: StatusInput): ConditionUpdate {
  const { facts, object: controlPlane } = input;
  const backend = facts.backend;
  const wanted = facts.version?.kind === "accepted" ? facts.version.version : undefined;
  if (facts.version && facts.version.kind !== "accepted") {
    return { type: upToDate, status: "False", reason: versionReason(facts), message: facts.version.message };
  }
  if (!backend.exists) {
    return {
      type: upToDate,
      status: "False",
      reason: REASONS.Provisioning,
      message: `no control plane runs yet; spec.version is ${controlPlane.spec.version}`,
    };
  }
  if (wanted !== undefined && backend.version !== wanted) {
    return {
      type: upToDate,
      status: "False",
      reason: REASONS.Updating,
      message: `runs Kubernetes ${backend.version}; upgrading to ${wanted}`,
    };
  }
  return {
    type: upToDate,
    status: "True",
    reason: ENGINE_CONTROL_PLANE_REASONS.UpToDate,
    message: `runs Kubernetes ${backend.version}`,
  };
}

/** RollingOut (read by Cluster API for the Cluster's RollingOut): True while the backend upgrades it. */
function rollingOutCondition(input: StatusInput): ConditionUpdate {
  const backend = input.facts.backend;
  return input.state === "running.updating" && backend.exists
    ? {
        type: rollingOut,
        status: "True",
        reason: ENGINE_CONTROL_PLANE_REASONS.RollingOut,
        message: `upgrading from Kubernetes ${backend.version}`,
      }
    : { type: rollingOut, status: "False", reason: ENGINE_CONTROL_PLANE_REASONS.NotRollingOut, message: "" };
}

/** Whether this engine acts on an EngineControlPlane (given its CAPI Cluster), decided first. */
export const engineControlPlaneResponsibility = steps.responsibility;
/** Why a paused EngineControlPlane is paused (given its CAPI Cluster), or undefined when it is not. */
export const controlPlanePausedBy = steps.pausedBy;
/** The backend's key for an EngineControlPlane: its own UID, so it never meets another object's cluster. */
export const engineControlPlaneTarget = steps.target;
/** The facts of the world, level-based. */
export const engineControlPlaneFacts = steps.facts;
/**
 * One step of an EngineControlPlane that is ours and not paused: the family's step; upgrades ordered from
 * `running.updating`, a downgrade never; `controlPlaneInitialized` once it runs with an endpoint.
 */
export const stepEngineControlPlane: (input: EngineControlPlaneStepInput) => EngineControlPlaneStepResult =
  steps.step;
/** The step of a paused EngineControlPlane (it or its CAPI Cluster): only the Paused condition says so and why. */
export const stepPausedEngineControlPlane = steps.pausedStep;
/** The status of an EngineControlPlane while the backend cannot be looked at: its main condition says why; nothing moves. */
export const unobservedEngineControlPlaneStatus = steps.unobservedStatus;

/** Every guard of the EngineControlPlane machine, as a person would say it. */
export const ENGINE_CONTROL_PLANE_GUARD_PHRASES = capiOwnedGuardPhrases(
  "EngineControlPlane",
  "control plane",
  {
    versionRejected: "spec.version is refused before anything was built (not offered)",
    readyToProvision:
      "a CAPI Cluster owns it and reports its infrastructure, its profile exists and offers spec.version",
    upgradeWanted: "the backend runs another version than spec.version asks for",
    backendReadyAsWanted: "the backend reports the control plane ready on the version asked for",
    versionRefused: "spec.version is refused: a downgrade, or a version the profile does not offer",
    versionAccepted: "spec.version resolves to an offered version that is no downgrade",
    publicationStale:
      "the kubeconfig Secret or the ClusterEndpoint is missing, or the backend's admin credentials changed",
  },
);

/** Explains `controlPlane` from what it stores: annotations, owner, state and its conditions. */
export function explainEngineControlPlane(
  controlPlane: EngineControlPlane,
  ownerPaused?: boolean,
): Explanation {
  return explainCapiOwned(controlPlane, ownerPaused, {
    kind: "EngineControlPlane",
    what: "the control plane",
    honoursManagedBy: false,
    conditions: [available, upToDate],
    waitingFor: (state, owner) => {
      switch (state.split(".")[0]) {
        case "pending":
          return owner === undefined
            ? "a Cluster API Cluster that names it in spec.controlPlaneRef (CAPI then sets the ownerReference)"
            : `Cluster ${owner} to report its infrastructure provisioned, ClusterProfile "${controlPlane.spec.profile}", and an offered spec.version`;
        case "running":
          return state === "running.updating"
            ? "the backend to finish the upgrade (the controller polls it); the control plane stays available"
            : state === "running.refused"
              ? "a person: a spec.version that is offered and no downgrade; the control plane keeps running meanwhile"
              : `nothing: available for Cluster ${owner ?? "(none)"}. It moves when spec.version changes, the Cluster is deleted, or the backend loses or fails it`;
        case "failed":
          return "a person: an offered spec.version, a fix at the backend, or deleting the Cluster";
        default:
          return undefined;
      }
    },
  });
}
