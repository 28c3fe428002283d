/**
 * What an EngineCluster publishes for Cluster API besides its own status: the `<cluster>-kubeconfig`
 * Secret CAPI's cluster cache reads, and the endpoint as a ClusterEndpoint object (the shape of CAPI's
 * "Flexible Managed Kubernetes Endpoints" proposal). Both carry the EngineCluster's UID label and an
 * owner reference to it; someone else's objects of the same names are never overwritten.
 */
import { CustomObjectsApi, type KubeConfig, type V1OwnerReference } from "@kubernetes/client-node";
import {
  type ApiEndpoint,
  CAPI_KUBECONFIG_SECRET,
  CAPI_LABELS,
  kubeconfigSecretName,
} from "../api/cluster-api.ts";
import { INFRASTRUCTURE_API_VERSION, LABELS, MANAGED_BY_ENGINE, RESOURCES } from "../api/constants.ts";
import type { ClusterEndpointObject, EngineCluster } from "../api/engine-cluster.ts";
import { isConflict, isNotFound } from "../api/error-message.ts";
import { deleteOwnedSecret, type OwnerLabel, writeOwnedSecret } from "./owned-secret.ts";

const ownerLabel = (cluster: EngineCluster): OwnerLabel => [
  LABELS.engineClusterUid,
  cluster.metadata.uid ?? "",
];

function ownerReference(cluster: EngineCluster): V1OwnerReference {
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "EngineCluster",
    name: cluster.metadata.name ?? "",
    uid: cluster.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

function labels(cluster: EngineCluster, capiCluster: string): Record<string, string> {
  return {
    [CAPI_LABELS.clusterName]: capiCluster,
    [LABELS.engineClusterUid]: cluster.metadata.uid ?? "",
    [LABELS.managedBy]: MANAGED_BY_ENGINE,
  };
}

/** The ClusterEndpoint of an EngineCluster has its name. */
export const clusterEndpointName = (cluster: EngineCluster): string => cluster.metadata.name ?? "";

/** Creates or replaces `<capiCluster>-kubeconfig` (type cluster.x-k8s.io/secret, key `value`). */
export async function writeKubeconfigSecret(
  kubeConfig: KubeConfig,
  cluster: EngineCluster,
  capiCluster: string,
  kubeconfig: string,
): Promise<void> {
  await writeOwnedSecret(
    kubeConfig,
    {
      metadata: {
        name: kubeconfigSecretName(capiCluster),
        namespace: cluster.metadata.namespace ?? "",
        labels: labels(cluster, capiCluster),
        ownerReferences: [ownerReference(cluster)],
      },
      type: CAPI_KUBECONFIG_SECRET.type,
      stringData: { [CAPI_KUBECONFIG_SECRET.key]: kubeconfig },
    },
    ownerLabel(cluster),
    `EngineCluster ${cluster.metadata.namespace}/${cluster.metadata.name}`,
  );
}

/** Creates or replaces the ClusterEndpoint holding `endpoint`; one made by someone else is an error naming it. */
export async function writeClusterEndpoint(
  kubeConfig: KubeConfig,
  cluster: EngineCluster,
  capiCluster: string,
  endpoint: ApiEndpoint,
): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = cluster.metadata.namespace ?? "";
  const name = clusterEndpointName(cluster);
  const body: ClusterEndpointObject = {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "ClusterEndpoint",
    metadata: {
      name,
      namespace,
      labels: labels(cluster, capiCluster),
      ownerReferences: [ownerReference(cluster)],
    },
    spec: { cluster: capiCluster, host: endpoint.host, port: endpoint.port, type: "apiserver" },
  };
  const resource = { ...RESOURCES.ClusterEndpoint, namespace };
  try {
    await api.createNamespacedCustomObject({ ...resource, body });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = (await api.getNamespacedCustomObject({ ...resource, name })) as ClusterEndpointObject;
    if (existing.metadata.labels?.[LABELS.engineClusterUid] !== cluster.metadata.uid) {
      throw new Error(
        `ClusterEndpoint ${namespace}/${name} exists and was not made for EngineCluster ${namespace}/${name}; not overwriting it`,
      );
    }
    const metadata = { ...body.metadata, resourceVersion: existing.metadata.resourceVersion };
    await api.replaceNamespacedCustomObject({ ...resource, name, body: { ...body, metadata } });
  }
}

/** Deletes the kubeconfig Secret and the ClusterEndpoint, where they are ours; absent is fine. */
export async function deletePublication(
  kubeConfig: KubeConfig,
  cluster: EngineCluster,
  capiCluster: string | undefined,
): Promise<void> {
  const namespace = cluster.metadata.namespace ?? "";
  if (capiCluster) {
    await deleteOwnedSecret(kubeConfig, namespace, kubeconfigSecretName(capiCluster), ownerLabel(cluster));
  }
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const resource = { ...RESOURCES.ClusterEndpoint, namespace, name: clusterEndpointName(cluster) };
  try {
    const existing = (await api.getNamespacedCustomObject(resource)) as ClusterEndpointObject;
    if (existing.metadata.labels?.[LABELS.engineClusterUid] !== cluster.metadata.uid) return;
    await api.deleteNamespacedCustomObject(resource);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
