/**
 * The EngineControlPlane kind's I/O half (the Cluster API side): the family's ({@link capiOwnedKind}), with
 * the control plane's own step, words and publisher, and its kubeconfig Secret rotated when the backend's
 * admin credentials change. Registered only with `--capi`.
 */
import type { CapiCluster } from "../../../api/cluster-api.ts";
import {
  CONTROLPLANE_API_VERSION,
  ENGINE_CONTROL_PLANE_ANNOTATIONS,
  ENGINE_CONTROL_PLANE_FINALIZER,
  ENGINE_CONTROL_PLANE_LABELS,
  type EngineControlPlane,
} from "../../../api/engine-control-plane.ts";
import {
  controlPlanePausedBy,
  engineControlPlaneResponsibility,
  engineControlPlaneTarget,
  explainEngineControlPlane,
  stepEngineControlPlane,
  stepPausedEngineControlPlane,
  unobservedEngineControlPlaneStatus,
} from "../../../machines/engine-control-plane/contract.ts";
import { ENGINE_CONTROL_PLANE_DEFINITION } from "../../../machines/engine-control-plane/definition.ts";
import { ownerPausedFor } from "../capi-owned/capi-owned.ts";
import { capiOwnedKind } from "../capi-owned/kind.ts";
import { CONTROL_PLANE_CACHES } from "./caches.ts";

/** The EngineControlPlane kind: Cluster API's ControlPlane contract (v1beta2) for managed control planes on the engine's backends. */
export const engineControlPlaneKind = capiOwnedKind<EngineControlPlane, CapiCluster | undefined>({
  definition: ENGINE_CONTROL_PLANE_DEFINITION,
  cache: CONTROL_PLANE_CACHES.engineControlPlanes,
  kubeconfigSecrets: CONTROL_PLANE_CACHES.kubeconfigSecrets,
  publisher: {
    apiVersion: CONTROLPLANE_API_VERSION,
    kind: "EngineControlPlane",
    uidLabel: ENGINE_CONTROL_PLANE_LABELS.uid,
  },
  logKey: "engineControlPlane",
  finalizer: ENGINE_CONTROL_PLANE_FINALIZER,
  what: "the control plane",
  // Its step reads the owning CAPI Cluster itself (its infrastructure, its pause).
  ownerOf: (capiCluster) => capiCluster,
  nothingLookedAt: { kubeconfig: "notWanted", endpointCurrent: true },
  rotatedBy: { fingerprintAnnotation: ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256 },
  responsibility: engineControlPlaneResponsibility,
  pausedBy: controlPlanePausedBy,
  pausedStep: (controlPlane, why, now) => stepPausedEngineControlPlane({ controlPlane, why, now }),
  unobserved: unobservedEngineControlPlaneStatus,
  target: engineControlPlaneTarget,
  // Its version is required: no default applies.
  step: (controlPlane, { defaultVersion: _, ...parts }) => stepEngineControlPlane({ controlPlane, ...parts }),

  describe: (command) =>
    command.kind === "publish"
      ? `publish (kubeconfig Secret, ClusterEndpoint) for Cluster ${command.capiCluster}`
      : "version" in command
        ? `${command.kind} (Kubernetes ${command.version})`
        : command.kind,

  async explain(controlPlane, read) {
    return explainEngineControlPlane(controlPlane, await ownerPausedFor(controlPlane, read));
  },
});
