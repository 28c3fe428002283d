/** The EngineControlPlane kind's caches: the control planes (watch-filtered) and the kubeconfig Secrets made for them. */
import {
  CONTROLPLANE_RESOURCES,
  ENGINE_CONTROL_PLANE_LABELS,
  type EngineControlPlane,
} from "../../../api/engine-control-plane.ts";
import { type CacheSpec, secretCache } from "../../informers.ts";

/** The caches the EngineControlPlane kind declares. */
export const CONTROL_PLANE_CACHES = {
  engineControlPlanes: {
    name: "EngineControlPlane",
    kind: "EngineControlPlane",
    resource: CONTROLPLANE_RESOURCES.EngineControlPlane,
    watchFiltered: true,
  } satisfies CacheSpec<EngineControlPlane> as CacheSpec<EngineControlPlane>,
  /** Only the kubeconfig Secrets the engine made for EngineControlPlanes (labelled with their uid). */
  kubeconfigSecrets: secretCache("ControlPlaneKubeconfigSecret", ENGINE_CONTROL_PLANE_LABELS.uid),
} as const;
