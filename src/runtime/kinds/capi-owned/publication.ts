/**
 * What the owner of a CAPI Cluster's endpoint publishes for Cluster API besides its own status: the
 * `<cluster>-kubeconfig` Secret CAPI's cluster cache reads, and the endpoint as a ClusterEndpoint object (the
 * shape of CAPI's "Flexible Managed Kubernetes Endpoints" proposal, which has the endpoint's owner publish it:
 * the EngineControlPlane when the control plane is ours, else the EngineCluster). Both carry the publisher's
 * UID label and an owner reference to it; someone else's objects of the same names are never overwritten.
 */
import { createHash } from "node:crypto";
import { CustomObjectsApi, type KubeConfig, type V1OwnerReference } from "@kubernetes/client-node";
import {
  type ApiEndpoint,
  CAPI_KUBECONFIG_SECRET,
  CAPI_LABELS,
  kubeconfigSecretName,
} from "../../../api/cluster-api.ts";
import { INFRASTRUCTURE_API_VERSION, LABELS, MANAGED_BY_ENGINE, RESOURCES } from "../../../api/constants.ts";
import type { ClusterEndpointObject } from "../../../api/engine-cluster.ts";
import { isConflict, isNotFound } from "../../../api/error-message.ts";
import { deleteOwnedSecret, type OwnerLabel, writeOwnedSecret } from "../shared/owned-secret.ts";

/** The object that publishes: its identity, and the label that marks what it made. */
export interface Publisher {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
  /** The label key whose value is the publisher's uid on everything it made. */
  readonly uidLabel: string;
}

const ownerLabel = (publisher: Publisher): OwnerLabel => [publisher.uidLabel, publisher.metadata.uid ?? ""];
const nameOf = (publisher: Publisher) =>
  `${publisher.kind} ${publisher.metadata.namespace}/${publisher.metadata.name}`;

function ownerReference(publisher: Publisher): V1OwnerReference {
  return {
    apiVersion: publisher.apiVersion,
    kind: publisher.kind,
    name: publisher.metadata.name ?? "",
    uid: publisher.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

function labels(publisher: Publisher, capiCluster: string): Record<string, string> {
  return {
    [CAPI_LABELS.clusterName]: capiCluster,
    [publisher.uidLabel]: publisher.metadata.uid ?? "",
    [LABELS.managedBy]: MANAGED_BY_ENGINE,
  };
}

/** The ClusterEndpoint of a publisher has its name. */
export const clusterEndpointName = (publisher: { metadata: { name?: string } }): string =>
  publisher.metadata.name ?? "";

/** SHA-256 (hex) of a kubeconfig: what the Secret records of its content, to notice new credentials without reading it. */
export const kubeconfigFingerprint = (kubeconfig: string): string =>
  createHash("sha256").update(kubeconfig).digest("hex");

/**
 * Creates or replaces `<capiCluster>-kubeconfig` (type cluster.x-k8s.io/secret, key `value`) for
 * `publisher`; `annotations` are written with it (e.g. the kubeconfig's fingerprint).
 */
export async function writePublishedKubeconfig(
  kubeConfig: KubeConfig,
  publisher: Publisher,
  capiCluster: string,
  kubeconfig: string,
  annotations?: Readonly<Record<string, string>>,
): Promise<void> {
  await writeOwnedSecret(
    kubeConfig,
    {
      metadata: {
        name: kubeconfigSecretName(capiCluster),
        namespace: publisher.metadata.namespace ?? "",
        labels: labels(publisher, capiCluster),
        ...(annotations ? { annotations: { ...annotations } } : {}),
        ownerReferences: [ownerReference(publisher)],
      },
      type: CAPI_KUBECONFIG_SECRET.type,
      stringData: { [CAPI_KUBECONFIG_SECRET.key]: kubeconfig },
    },
    ownerLabel(publisher),
    nameOf(publisher),
  );
}

/** The ClusterEndpoint `publisher` publishes for `capiCluster`: its name, its uid label, owned by it. */
export function publishedEndpoint(
  publisher: Publisher,
  capiCluster: string,
  endpoint: ApiEndpoint,
): ClusterEndpointObject {
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "ClusterEndpoint",
    metadata: {
      name: clusterEndpointName(publisher),
      namespace: publisher.metadata.namespace ?? "",
      labels: labels(publisher, capiCluster),
      ownerReferences: [ownerReference(publisher)],
    },
    spec: { cluster: capiCluster, host: endpoint.host, port: endpoint.port, type: "apiserver" },
  };
}

/** Creates or replaces the ClusterEndpoint holding `endpoint`; one made by someone else is an error naming it. */
export async function writePublishedEndpoint(
  kubeConfig: KubeConfig,
  publisher: Publisher,
  capiCluster: string,
  endpoint: ApiEndpoint,
): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = publisher.metadata.namespace ?? "";
  const name = clusterEndpointName(publisher);
  const body = publishedEndpoint(publisher, capiCluster, endpoint);
  const resource = { ...RESOURCES.ClusterEndpoint, namespace };
  try {
    await api.createNamespacedCustomObject({ ...resource, body });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = (await api.getNamespacedCustomObject({ ...resource, name })) as ClusterEndpointObject;
    if (existing.metadata.labels?.[publisher.uidLabel] !== publisher.metadata.uid) {
      throw new Error(
        `ClusterEndpoint ${namespace}/${name} exists and was not made for ${nameOf(publisher)}; not overwriting it`,
      );
    }
    const metadata = { ...body.metadata, resourceVersion: existing.metadata.resourceVersion };
    await api.replaceNamespacedCustomObject({ ...resource, name, body: { ...body, metadata } });
  }
}

/** Deletes the kubeconfig Secret and the ClusterEndpoint of `publisher`, where they are its own; absent is fine. */
export async function deletePublished(
  kubeConfig: KubeConfig,
  publisher: Publisher,
  capiCluster: string | undefined,
): Promise<void> {
  const namespace = publisher.metadata.namespace ?? "";
  if (capiCluster) {
    await deleteOwnedSecret(kubeConfig, namespace, kubeconfigSecretName(capiCluster), ownerLabel(publisher));
  }
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const resource = { ...RESOURCES.ClusterEndpoint, namespace, name: clusterEndpointName(publisher) };
  try {
    const existing = (await api.getNamespacedCustomObject(resource)) as ClusterEndpointObject;
    if (existing.metadata.labels?.[publisher.uidLabel] !== publisher.metadata.uid) return;
    await api.deleteNamespacedCustomObject(resource);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
