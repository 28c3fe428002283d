/** One Cluster read from the API server, past the cache (for a decision the cache may not have caught up with). */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import { RESOURCES } from "../../../api/constants.ts";
import { isNotFound } from "../../../api/error-message.ts";

/** The Cluster from the API server; undefined when it does not exist. */
export async function readCluster(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
): Promise<Cluster | undefined> {
  try {
    return (await kubeConfig
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name })) as Cluster;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
