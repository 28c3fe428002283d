/**
 * The Clusters of an object's own namespace, for kinds whose objects act on them (HibernationSchedule,
 * ClusterSnapshotSchedule, Rollout): a Cluster that appears, changes or goes wakes every object of the kind in its
 * namespace, and each look reads them from the cache.
 */
import type { Cluster } from "../../../api/cluster.ts";
import { objectKey } from "../../../api/object-key.ts";
import type { CacheSpec, InformerSet } from "../../informers.ts";
import { type MachineObject, type Wake, wake } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";

/** Wakes the objects of `cache` in the namespace of a Cluster that changed. */
export function clustersOfNamespaceWake<T extends MachineObject>(cache: CacheSpec<T>): Wake<never> {
  return wake(CLUSTER_CACHES.clusters, (cluster: Cluster, context) =>
    context.informers
      .of(cache)
      .list()
      .filter((object) => object.metadata.namespace === cluster.metadata.namespace)
      .map(objectKey),
  );
}

/** The Clusters of `namespace` as the cache holds them now. */
export function clustersOfNamespace(informers: InformerSet, namespace: string): Cluster[] {
  return informers
    .of(CLUSTER_CACHES.clusters)
    .list()
    .filter((cluster) => cluster.metadata.namespace === namespace);
}
