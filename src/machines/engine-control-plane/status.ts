/** The status an EngineControlPlane shows: the v1beta2 ControlPlane contract's fields and conditions, the machine's state and phase. */
import type { ApiEndpoint } from "../../api/cluster-api.ts";
import { REASONS } from "../../api/constants.ts";
import {
  capiVersion,
  ENGINE_CONTROL_PLANE_CONDITIONS,
  type EngineControlPlane,
  type EngineControlPlaneStatus,
} from "../../api/engine-control-plane.ts";
import {
  CAPI_OWNED_REASONS,
  NOT_PAUSED,
  pausedObjectStatus,
  progressCondition,
  type ServingInput,
  servingCondition,
  versionReason,
} from "../cluster/capi-owned-status.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";
import type { EngineControlPlaneFacts } from "./machine.ts";

/** Reasons of the EngineControlPlane's conditions beyond the shared {@link REASONS}. */
export const ENGINE_CONTROL_PLANE_REASONS = {
  ...CAPI_OWNED_REASONS,
  /** Its Cluster's infrastructure is not provisioned yet (only with an infrastructureRef). */
  WaitingForInfrastructure: "WaitingForInfrastructure",
  Available: "Available",
  NotAvailable: "NotAvailable",
  UpToDate: "UpToDate",
  RollingOut: "RollingOut",
  NotRollingOut: "NotRollingOut",
} as const;

const { available, ready, upToDate, rollingOut } = ENGINE_CONTROL_PLANE_CONDITIONS;

/** What the status is computed from. */
export interface EngineControlPlaneStatusInput {
  readonly controlPlane: EngineControlPlane;
  readonly facts: EngineControlPlaneFacts;
  readonly state: string;
  /** The phase the state is tagged with. */
  readonly phase: string | undefined;
  /** Running with an endpoint: the contract's initialized signal. */
  readonly initialized: boolean;
  /** The endpoint published (the spec's once set). */
  readonly endpoint: ApiEndpoint | undefined;
  /** The endpoint the backend reports now. */
  readonly backendEndpoint: ApiEndpoint | undefined;
  readonly lastError?: string;
  readonly now: string;
}

/** The status for the step's state; unchanged parts keep their values, so an idle step writes nothing. */
export function desiredEngineControlPlaneStatus(
  input: EngineControlPlaneStatusInput,
): EngineControlPlaneStatus {
  const { controlPlane, facts } = input;
  const previous = controlPlane.status;
  const generation = controlPlane.metadata.generation ?? 0;
  // Once initialized, always initialized: Cluster API reads it as "the control plane came up once".
  const initialized = input.initialized || previous?.initialization?.controlPlaneInitialized === true;
  const availableNow = availableCondition(input);
  const status: Record<string, unknown> = {
    ...previous,
    observedGeneration: generation,
    ...(input.phase ? { phase: input.phase } : {}),
    state: input.state,
    initialization: { ...previous?.initialization, controlPlaneInitialized: initialized },
    initialized,
    ready: availableNow.status === "True",
    externalManagedControlPlane: true,
    conditions: mergeConditions(
      previous?.conditions,
      [
        availableNow,
        readyCondition(input, availableNow),
        upToDateCondition(input),
        rollingOutCondition(input),
        NOT_PAUSED,
      ],
      generation,
      input.now,
    ),
  };
  const backend = facts.backend;
  if (backend.exists && backend.phase !== "provisioning") {
    const version = capiVersion(backend.version);
    status.version = version;
    status.versions =
      previous?.versions?.length === 1 && previous.versions[0]?.version === version
        ? previous.versions
        : [{ version }];
  }
  return status as EngineControlPlaneStatus;
}

/** The status of a paused EngineControlPlane: what it was, with the Paused condition True and why. */
export function pausedControlPlaneStatus(
  controlPlane: EngineControlPlane,
  why: string,
  now: string,
): EngineControlPlaneStatus {
  return pausedObjectStatus(controlPlane, why, now);
}

const inRunning = (state: string) => state.startsWith("running");

/** The contract's Available: the control plane serves requests (also while it upgrades or refuses a version). */
function availableCondition(input: EngineControlPlaneStatusInput): ConditionUpdate {
  const { controlPlane, facts, state } = input;
  const backend = facts.backend;
  const name = `EngineControlPlane ${controlPlane.metadata.namespace}/${controlPlane.metadata.name}`;
  const serving: ServingInput = {
    type: available,
    what: "the control plane",
    facts,
    state,
    endpoint: input.endpoint,
    backendEndpoint: input.backendEndpoint,
    lastError: input.lastError,
  };
  if (inRunning(state) && input.initialized && backend.exists) {
    return servingCondition(serving, ENGINE_CONTROL_PLANE_REASONS.Available, backend.version);
  }
  const progress = progressCondition(serving);
  if (progress) return progress;
  const notAvailable = (reason: string, message: string): ConditionUpdate => ({
    type: available,
    status: "False",
    reason,
    message,
  });
  if (facts.owner === undefined) {
    return notAvailable(
      ENGINE_CONTROL_PLANE_REASONS.WaitingForClusterOwner,
      `no Cluster API Cluster owns ${name} yet; name it in a Cluster's spec.controlPlaneRef (nothing is built until then)`,
    );
  }
  if (!facts.infrastructureReady) {
    return notAvailable(
      ENGINE_CONTROL_PLANE_REASONS.WaitingForInfrastructure,
      `waiting for Cluster ${facts.owner} to report status.initialization.infrastructureProvisioned`,
    );
  }
  if (!facts.profileFound) {
    return notAvailable(
      REASONS.ProfileNotFound,
      `ClusterProfile "${controlPlane.spec.profile}" does not exist; create it or fix spec.profile (retrying)`,
    );
  }
  return notAvailable("Pending", "waiting to create the control plane");
}

/** Ready: available and at rest on the version asked for. */
function readyCondition(
  input: EngineControlPlaneStatusInput,
  availableNow: ConditionUpdate,
): ConditionUpdate {
  if (availableNow.status !== "True") return { ...availableNow, type: ready };
  const notAtRest = upToDateCondition(input);
  return notAtRest.status === "True"
    ? { type: ready, status: "True", reason: REASONS.Ready, message: availableNow.message }
    : { ...notAtRest, type: ready };
}

/** UpToDate: the running version is the one spec.version resolves to; False says why (upgrading, refused). */
function upToDateCondition(input: EngineControlPlaneStatusInput): ConditionUpdate {
  const { facts, controlPlane } = input;
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
function rollingOutCondition(input: EngineControlPlaneStatusInput): ConditionUpdate {
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
