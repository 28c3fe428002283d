/**
 * Reads the objects a Cluster's `spec.clusterConfigs` names (contract 1.2), for a backend that declares their
 * kind (`ClusterBackend.clusterConfigResource`): read on each reconcile of such a Cluster, so a changed one is
 * taken up at the next look (a Cluster that names none costs nothing).
 */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { ResolvedClusterConfig } from "../../../api/backend.ts";
import type { ClusterBackend } from "../../../api/backend-contract.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { JsonObject } from "../../../api/common.ts";
import { errorMessage, isNotFound } from "../../../api/error-message.ts";

/** The Cluster's ClusterConfigs in its order, each found or not; undefined when it names none or the backend reads none. */
export async function readClusterConfigs(
  kubeConfig: KubeConfig,
  backend: ClusterBackend,
  cluster: Cluster,
): Promise<ResolvedClusterConfig[] | undefined> {
  const resource = backend.clusterConfigResource;
  const references = cluster.spec.clusterConfigs ?? [];
  if (!resource || references.length === 0) return undefined;
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = cluster.metadata.namespace ?? "";
  return Promise.all(
    references.map(async ({ name }): Promise<ResolvedClusterConfig> => {
      try {
        const object = (await api.getNamespacedCustomObject({ ...resource, namespace, name })) as {
          spec?: JsonObject;
        };
        return { name, found: true, spec: object.spec ?? {} };
      } catch (error) {
        if (isNotFound(error)) return { name, found: false };
        throw new Error(`reading ${resource.plural} ${namespace}/${name}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
    }),
  );
}
