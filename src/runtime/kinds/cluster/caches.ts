/** The Cluster kind's cache: every Cluster (other kinds read and wake on it too). */
import type { Cluster } from "../../../api/cluster.ts";
import { resourceCache } from "../../informers.ts";

/** The caches the Cluster kind declares. */
export const CLUSTER_CACHES = {
  clusters: resourceCache<Cluster>("Cluster"),
} as const;
