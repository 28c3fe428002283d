/**
 * Which of a schedule's snapshots go, pure: per Cluster, the newest `keep` complete ones stay, and the newest one
 * whatever it is (one being taken is never deleted while it is the newest); the others go. Those already being
 * deleted are not named again.
 */
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import { SNAPSHOT_CLUSTER_LABEL } from "../../api/constants/cluster-snapshot.ts";
import { SCHEDULED_AT_ANNOTATION } from "../../api/constants/cluster-snapshot-schedule.ts";

/** A schedule's snapshot as retention sees it. */
const scheduledAt = (snapshot: ClusterSnapshot) =>
  snapshot.metadata.annotations?.[SCHEDULED_AT_ANNOTATION] ?? snapshot.metadata.creationTimestamp ?? "";

/** Newest first: by the time it was due (RFC 3339 in UTC sorts as text), then by name. */
function newestFirst(a: ClusterSnapshot, b: ClusterSnapshot): number {
  const [x, y] = [scheduledAt(a), scheduledAt(b)];
  if (x !== y) return x < y ? 1 : -1;
  const [m, n] = [a.metadata.name ?? "", b.metadata.name ?? ""];
  return m < n ? 1 : m > n ? -1 : 0;
}

/** The names of the snapshots (all of one schedule) to delete so that each Cluster keeps its newest `keep`, sorted. */
export function expiredSnapshots(snapshots: readonly ClusterSnapshot[], keep: number): string[] {
  const byCluster = new Map<string, ClusterSnapshot[]>();
  for (const snapshot of snapshots) {
    const cluster = snapshot.metadata.labels?.[SNAPSHOT_CLUSTER_LABEL] ?? snapshot.spec.cluster.name;
    byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), snapshot]);
  }
  const expired: string[] = [];
  for (const group of byCluster.values()) {
    const sorted = [...group].sort(newestFirst);
    let complete = 0;
    for (const [index, snapshot] of sorted.entries()) {
      const isComplete = snapshot.status?.phase === "Complete";
      const kept = index === 0 || (isComplete && complete < keep);
      if (isComplete && kept) complete++;
      if (!kept && !snapshot.metadata.deletionTimestamp) expired.push(snapshot.metadata.name ?? "");
    }
  }
  return expired.sort();
}
