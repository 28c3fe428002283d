/** The ClusterRequest kind's caches: the requests, the purposes they name, and the grants of their Clusters. */
import type { ClusterRequest } from "../../../api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../../api/cluster-request-grant.ts";
import type { Purpose } from "../../../api/purpose.ts";
import { resourceCache } from "../../informers.ts";

/** The caches the ClusterRequest kind declares. */
export const CLUSTER_REQUEST_CACHES = {
  clusterRequests: resourceCache<ClusterRequest>("ClusterRequest"),
  purposes: resourceCache<Purpose>("Purpose"),
  grants: resourceCache<ClusterRequestGrant>("ClusterRequestGrant"),
} as const;
