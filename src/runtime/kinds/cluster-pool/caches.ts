/** The cache of ClusterPools: read by the pool controller, and by the Cluster kind to claim pool members. */
import type { ClusterPool } from "../../../api/cluster-pool.ts";
import { resourceCache } from "../../informers.ts";

/** The caches warm pools read. */
export const POOL_CACHES = {
  pools: resourceCache<ClusterPool>("ClusterPool"),
} as const;
