/** Which Clusters are being made from a ClusterSnapshot now (so its deletion waits for them), pure. */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import { RESTORE_FROM_ANNOTATION } from "../../api/constants/cluster-snapshot.ts";

/** Cluster states before its backend has made it: a Cluster made from a snapshot still reads it in these. */
const NOT_MADE_YET = new Set(["pending", "claimingPoolMember", "provisioning"]);

/**
 * Whether `cluster` is being made from `snapshot` now: it is of the snapshot's namespace, its restore-from annotation
 * names it, it is not being deleted,
 * and its backend has not made it yet (the annotation is read when the cluster is made, never after).
 */
export function isMadeFrom(cluster: Cluster, snapshot: ClusterSnapshot): boolean {
  if (cluster.metadata.namespace !== snapshot.metadata.namespace) return false;
  if (cluster.metadata.annotations?.[RESTORE_FROM_ANNOTATION] !== snapshot.metadata.name) return false;
  if (cluster.metadata.deletionTimestamp) return false;
  const state = cluster.status?.providerStatus?.state;
  return typeof state !== "string" || state === "" || NOT_MADE_YET.has(state);
}
