/** The EngineCluster kind's caches: the EngineClusters (watch-filtered) and the kubeconfig Secrets made for them. */
import { ENGINE_CLUSTER_LABELS } from "../../../api/constants/capi.ts";
import type { EngineCluster } from "../../../api/engine-cluster.ts";
import { resourceCache, secretCache } from "../../informers.ts";

/** The caches the EngineCluster kind declares. */
export const ENGINE_CLUSTER_CACHES = {
  engineClusters: { ...resourceCache<EngineCluster>("EngineCluster"), watchFiltered: true },
  /** Only the kubeconfig Secrets the engine made for EngineClusters (labelled with their uid). */
  kubeconfigSecrets: secretCache("KubeconfigSecret", ENGINE_CLUSTER_LABELS.engineClusterUid),
} as const;
