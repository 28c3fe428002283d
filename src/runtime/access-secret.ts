/** The Secret that hands an AccessRequest's kubeconfig to its requester, in the request's namespace. */
import { ApiException, CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import type { AccessRequest } from "../api/access-request.ts";
import { CLUSTERS_API_VERSION, LABELS } from "../api/constants.ts";
import type { AccessSecretData } from "./access-target-client.ts";

/** Creates or replaces the Secret: labelled with the request's uid (so the engine watches it) and owned by the request. */
export async function writeAccessSecret(
  kubeConfig: KubeConfig,
  request: AccessRequest,
  name: string,
  data: AccessSecretData,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespace = request.metadata.namespace ?? "";
  const body: V1Secret = {
    metadata: {
      name,
      namespace,
      labels: {
        [LABELS.accessRequestUid]: request.metadata.uid ?? "",
        "app.kubernetes.io/managed-by": "openmcp-engine",
      },
      ownerReferences: [
        {
          apiVersion: CLUSTERS_API_VERSION,
          kind: "AccessRequest",
          name: request.metadata.name ?? "",
          uid: request.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    type: "Opaque",
    stringData: { ...data },
  };
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
    const existing = await core.readNamespacedSecret({ namespace, name });
    if (existing.metadata?.labels?.[LABELS.accessRequestUid] !== request.metadata.uid) {
      throw new Error(
        `Secret ${namespace}/${name} exists and was not made for this AccessRequest; not overwriting it`,
      );
    }
    await core.replaceNamespacedSecret({
      namespace,
      name,
      body: {
        ...body,
        data: {},
        metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
      },
    });
  }
}

/** Deletes the Secret if it is ours; gone already is fine. */
export async function deleteAccessSecret(
  kubeConfig: KubeConfig,
  request: AccessRequest,
  name: string,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespace = request.metadata.namespace ?? "";
  try {
    const existing = await core.readNamespacedSecret({ namespace, name });
    if (existing.metadata?.labels?.[LABELS.accessRequestUid] !== request.metadata.uid) return;
    await core.deleteNamespacedSecret({ namespace, name });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
}
