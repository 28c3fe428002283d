/** Whether Cluster API is installed on the API server: its Cluster CRD serves the contract version. */
import { ApiException, ApiextensionsV1Api, type KubeConfig } from "@kubernetes/client-node";
import { CAPI_CLUSTER_CRD, CAPI_CONTRACT } from "../../../api/cluster-api.ts";
import { isNotFound } from "../../../api/error-message.ts";

/** What the look found: installed, not installed (and why, in words), or not readable. */
export type CapiPresence = { readonly installed: true } | { readonly installed: false; readonly why: string };

/** Reads CRD `clusters.cluster.x-k8s.io` and checks that it serves v1beta2. */
export async function detectCapi(kubeConfig: KubeConfig): Promise<CapiPresence> {
  try {
    const crd = await kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: CAPI_CLUSTER_CRD });
    const served = crd.spec.versions.some((version) => version.name === CAPI_CONTRACT && version.served);
    return served
      ? { installed: true }
      : {
          installed: false,
          why: `CRD ${CAPI_CLUSTER_CRD} does not serve ${CAPI_CONTRACT} (Cluster API older than v1.11?)`,
        };
  } catch (error) {
    if (isNotFound(error)) {
      return { installed: false, why: `CRD ${CAPI_CLUSTER_CRD} is not installed` };
    }
    if (error instanceof ApiException && error.code === 403) {
      return { installed: false, why: `not allowed to read CRD ${CAPI_CLUSTER_CRD} (RBAC)` };
    }
    throw error;
  }
}
