/** Why an EngineControlPlane is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import { ENGINE_CONTROL_PLANE_CONDITIONS, type EngineControlPlane } from "../../api/engine-control-plane.ts";
import { explainCapiOwned } from "../cluster/capi-owned-explain.ts";
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
  return explainCapiOwned(controlPlane, ownerPaused, {
    kind: "EngineControlPlane",
    what: "the control plane",
    conditions: [ENGINE_CONTROL_PLANE_CONDITIONS.available, ENGINE_CONTROL_PLANE_CONDITIONS.upToDate],
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
