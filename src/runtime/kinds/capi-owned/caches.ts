/** The caches every kind Cluster API owns reads: the owning CAPI Clusters and the ClusterEndpoints published. */
import { CAPI_CLUSTER_RESOURCE, type CapiCluster } from "../../../api/cluster-api.ts";
import type { ClusterEndpointObject } from "../../../api/engine-cluster.ts";
import { type CacheSpec, resourceCache } from "../../informers.ts";

/** The caches the Cluster API family declares. */
export const CAPI_CACHES = {
  /** Cluster API's Clusters (only read, and only with the Cluster API side on): owners of the family's objects. */
  capiClusters: {
    name: "CapiCluster",
    kind: "Cluster",
    resource: CAPI_CLUSTER_RESOURCE,
    watchFiltered: true,
  } satisfies CacheSpec<CapiCluster> as CacheSpec<CapiCluster>,
  clusterEndpoints: resourceCache<ClusterEndpointObject>("ClusterEndpoint"),
} as const;
