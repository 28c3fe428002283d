/** Why an EngineControlPlane is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import { CAPI_ANNOTATIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import { ENGINE_CONTROL_PLANE_CONDITIONS, type EngineControlPlane } from "../../api/engine-control-plane.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { engineControlPlaneMachine } from "./machine.ts";

/** Every guard of the EngineControlPlane machine, as a person would say it. */
export const ENGINE_CONTROL_PLANE_GUARD_PHRASES: Readonly<
  Record<keyof typeof engineControlPlaneMachine.implementations.guards, string>
> = {
  isBeingDeleted: "the EngineControlPlane is being deleted (CAPI deletes it with its Cluster)",
  versionRejected: "spec.version is refused before anything was built (not offered)",
  readyToProvision:
    "a CAPI Cluster owns it and reports its infrastructure, its profile exists and offers spec.version",
  backendAbsent: "the backend has no control plane for it",
  backendReady: "the backend reports the control plane ready with an endpoint",
  backendFailed: "the backend reports the control plane failed",
  upgradeWanted: "the backend runs another version than spec.version asks for",
  backendReadyAsWanted: "the backend reports the control plane ready on the version asked for",
  versionRefused: "spec.version is refused: a downgrade, or a version the profile does not offer",
  versionAccepted: "spec.version resolves to an offered version that is no downgrade",
  publicationStale:
    "the kubeconfig Secret or the ClusterEndpoint is missing, or the backend's admin credentials changed",
  problemResolved: "the version is offered again and the backend no longer reports failure",
  withoutOurFinalizer: "our finalizer is gone",
  noForeignFinalizers: "no other finalizer remains",
  backendNotDeleting: "the backend stopped deleting (the delete is ordered again)",
};

/** Explains `controlPlane` from what it stores: annotations, owner, state and its conditions. */
export function explainEngineControlPlane(
  controlPlane: EngineControlPlane,
  ownerPaused?: boolean,
): Explanation {
  const status = controlPlane.status;
  const state = status?.state || undefined;
  const base = { state, phase: status?.phase };
  const annotations = controlPlane.metadata.annotations ?? {};
  const condition = (type: string) => status?.conditions?.find((c) => c.type === type);
  const owner = owningCapiCluster(controlPlane.metadata);
  if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) {
    return {
      ...base,
      why: [`annotated ${ANNOTATIONS.operation}: ${OPERATIONS.ignore}: the engine skips it entirely`],
      waitingFor: [`someone to remove the ${ANNOTATIONS.operation} annotation`],
    };
  }
  const why: string[] = [];
  const waitingFor: string[] = [];
  const paused = condition(ENGINE_CONTROL_PLANE_CONDITIONS.paused);
  if (annotations[CAPI_ANNOTATIONS.paused] !== undefined || ownerPaused || paused?.status === "True") {
    why.push(paused?.status === "True" ? `paused: ${paused.message}` : "paused");
    waitingFor.push(
      `someone to unpause it (remove annotation ${CAPI_ANNOTATIONS.paused}, or spec.paused of Cluster ${owner ?? "(its owner)"})`,
    );
  }
  if (state === undefined) {
    why.push("no engine has written its status yet");
    waitingFor.push("the engine with the Cluster API side on (is it running with --capi?)");
    return { ...base, why, waitingFor };
  }
  for (const type of [ENGINE_CONTROL_PLANE_CONDITIONS.available, ENGINE_CONTROL_PLANE_CONDITIONS.upToDate]) {
    const found = condition(type);
    if (found)
      why.push(`${type}=${found.status} (${found.reason})${found.message ? `: ${found.message}` : ""}`);
  }
  switch (state.split(".")[0]) {
    case "pending":
      waitingFor.push(
        owner === undefined
          ? "a Cluster API Cluster that names it in spec.controlPlaneRef (CAPI then sets the ownerReference)"
          : `Cluster ${owner} to report its infrastructure provisioned, ClusterProfile "${controlPlane.spec.profile}", and an offered spec.version`,
      );
      break;
    case "provisioning":
      waitingFor.push(
        "the backend to report the control plane ready with an endpoint (the controller polls it)",
      );
      break;
    case "running":
      waitingFor.push(
        state === "running.updating"
          ? "the backend to finish the upgrade (the controller polls it); the control plane stays available"
          : state === "running.refused"
            ? "a person: a spec.version that is offered and no downgrade; the control plane keeps running meanwhile"
            : `nothing: available for Cluster ${owner ?? "(none)"}. It moves when spec.version changes, the Cluster is deleted, or the backend loses or fails it`,
      );
      break;
    case "failed":
      waitingFor.push("a person: an offered spec.version, a fix at the backend, or deleting the Cluster");
      break;
    case "deleting":
      waitingFor.push(
        state === "deleting.blocked"
          ? "the other finalizers to go; nothing is deleted at the backend until then"
          : state === "deleting.releasing"
            ? "the backend to report the control plane gone; then our finalizer is removed"
            : "the API server to delete the object",
      );
      break;
    default:
      why.push(`"${state}" is not a state of the EngineControlPlane machine (hand-edited status?)`);
      waitingFor.push("the next reconcile");
  }
  return { ...base, why, waitingFor };
}
