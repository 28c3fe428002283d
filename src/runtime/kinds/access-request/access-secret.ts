/** The Secret that hands an AccessRequest's kubeconfig to its requester, in the request's namespace. */
import type { KubeConfig, V1Secret } from "@kubernetes/client-node";
import type { AccessRequest } from "../../../api/access-request.ts";
import { ACCESS_REQUEST_LABELS } from "../../../api/constants/access-request.ts";
import { CLUSTERS_API_VERSION, LABELS, MANAGED_BY_ENGINE } from "../../../api/constants.ts";
import { deleteOwnedSecret, type OwnerLabel, writeOwnedSecret } from "../shared/owned-secret.ts";
import type { AccessSecretData } from "./target-client.ts";

const ownerLabel = (request: AccessRequest): OwnerLabel => [
  ACCESS_REQUEST_LABELS.accessRequestUid,
  request.metadata.uid ?? "",
];

/** Creates or replaces the Secret: labelled with the request's uid (so the engine watches it) and owned by the request. */
export async function writeAccessSecret(
  kubeConfig: KubeConfig,
  request: AccessRequest,
  name: string,
  data: AccessSecretData,
): Promise<void> {
  const body: V1Secret = {
    metadata: {
      name,
      namespace: request.metadata.namespace ?? "",
      labels: {
        [ACCESS_REQUEST_LABELS.accessRequestUid]: request.metadata.uid ?? "",
        [LABELS.managedBy]: MANAGED_BY_ENGINE,
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
  await writeOwnedSecret(kubeConfig, body, ownerLabel(request), "this AccessRequest");
}

/** Deletes the Secret if it is ours; gone already is fine. */
export async function deleteAccessSecret(
  kubeConfig: KubeConfig,
  request: AccessRequest,
  name: string,
): Promise<void> {
  await deleteOwnedSecret(kubeConfig, request.metadata.namespace ?? "", name, ownerLabel(request));
}
