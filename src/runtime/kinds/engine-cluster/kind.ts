/**
 * The EngineCluster kind's I/O half (the Cluster API side): the family's ({@link capiOwnedKind}), with the
 * EngineCluster's own step, words and publisher. Registered only when the Cluster API side is on (`--capi`).
 */
import { CAPI_ANNOTATIONS } from "../../../api/cluster-api.ts";
import { ENGINE_CLUSTER_FINALIZERS, ENGINE_CLUSTER_LABELS } from "../../../api/constants/capi.ts";
import { INFRASTRUCTURE_API_VERSION } from "../../../api/constants.ts";
import type { EngineCluster } from "../../../api/engine-cluster.ts";
import {
  engineClusterResponsibility,
  engineClusterTarget,
  explainEngineCluster,
  pausedBy,
  stepEngineCluster,
  stepPausedEngineCluster,
  unobservedEngineClusterStatus,
} from "../../../machines/engine-cluster/contract.ts";
import { ENGINE_CLUSTER_DEFINITION } from "../../../machines/engine-cluster/definition.ts";
import { ownerPausedFor } from "../capi-owned/capi-owned.ts";
import { capiOwnedKind } from "../capi-owned/kind.ts";
import { ENGINE_CLUSTER_CACHES } from "./caches.ts";

/**
 * The EngineCluster kind: Cluster API's InfraCluster contract (v1beta2) on the engine's backends. Driven
 * only with the Cluster API side on (`capi`): it watches Cluster API's own resources.
 */
export const engineClusterKind = capiOwnedKind<EngineCluster, boolean>({
  definition: ENGINE_CLUSTER_DEFINITION,
  cache: ENGINE_CLUSTER_CACHES.engineClusters,
  kubeconfigSecrets: ENGINE_CLUSTER_CACHES.kubeconfigSecrets,
  publisher: {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "EngineCluster",
    uidLabel: ENGINE_CLUSTER_LABELS.engineClusterUid,
  },
  logKey: "engineCluster",
  finalizer: ENGINE_CLUSTER_FINALIZERS.engineCluster,
  what: "the cluster",
  // Its step reads only whether the owning CAPI Cluster is paused.
  ownerOf: (capiCluster) => capiCluster?.spec?.paused === true,
  nothingLookedAt: { kubeconfig: "notWanted", endpointCurrent: false },
  responsibility: engineClusterResponsibility,
  pausedBy,
  pausedStep: (cluster, why, now) => stepPausedEngineCluster({ cluster, why, now }),
  unobserved: unobservedEngineClusterStatus,
  target: engineClusterTarget,
  step: (cluster, { owner: _, defaultVersion, ...parts }) =>
    stepEngineCluster({ cluster, ...parts, ...(defaultVersion ? { defaultVersion } : {}) }),

  describe: (command) =>
    command.kind === "publish"
      ? `publish (kubeconfig Secret, ClusterEndpoint) for Cluster ${command.capiCluster}`
      : command.kind,

  async explain(cluster, read) {
    const ownerPaused = await ownerPausedFor(cluster, read);
    return explainEngineCluster(
      cluster,
      ownerPaused || cluster.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined,
    );
  },
});
