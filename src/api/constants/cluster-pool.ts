/** Constants of the ClusterPool kind: its finalizer and the annotation on the Clusters it serves. */

import { ENGINE_GROUP } from "../constants.ts";

/** Annotations a ClusterPool puts on the Clusters it serves. */
export const CLUSTER_POOL_ANNOTATIONS = {
  /** On a Cluster served from a warm pool: `<ClusterPool name>/<pool cluster id>`, written once it is bound. */
  poolMember: `${ENGINE_GROUP}/pool-member`,
} as const;

/** Finalizers on a ClusterPool. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const CLUSTER_POOL_FINALIZERS = {
  /** Ours on ClusterPools: the pool may still hold clusters at the backend. */
  clusterPool: `${ENGINE_GROUP}/clusterpool`,
} as const;
