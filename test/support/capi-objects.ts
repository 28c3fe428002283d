/** Cluster API objects (`cluster.x-k8s.io/v1beta2`) created as a Cluster API user applies them. */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { CAPI_CLUSTER_RESOURCE, CAPI_CONTRACT, CAPI_GROUP } from "../../src/api/cluster-api.ts";

const RESOURCE = {
  Cluster: CAPI_CLUSTER_RESOURCE,
  ClusterClass: { group: CAPI_GROUP, version: CAPI_CONTRACT, plural: "clusterclasses" },
} as const;

/** Creates the CAPI `kind` `namespace/name` with `spec`; resolves to what the API server stored. */
export const createCapiObject = (
  custom: CustomObjectsApi,
  namespace: string,
  kind: keyof typeof RESOURCE,
  name: string,
  spec: unknown,
): Promise<unknown> =>
  custom.createNamespacedCustomObject({
    ...RESOURCE[kind],
    namespace,
    body: { apiVersion: `${CAPI_GROUP}/${CAPI_CONTRACT}`, kind, metadata: { name }, spec },
  });
