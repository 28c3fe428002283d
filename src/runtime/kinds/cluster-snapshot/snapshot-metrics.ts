/**
 * The ClusterSnapshot kind's metrics: deleted ClusterSnapshots whose data is still in their store, by the reason their
 * Removed condition gives (read from the cache at scrape time: an alert on it finds a store that cannot be reached,
 * or a deletion held).
 */
import { Gauge, type Registry } from "prom-client";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import { SNAPSHOT_CONDITIONS } from "../../../api/constants/cluster-snapshot.ts";

/** Registers the gauge of deleted ClusterSnapshots whose data is left, reading `snapshots` at each scrape. */
export function registerSnapshotsNotRemoved(
  registry: Registry,
  snapshots: () => readonly ClusterSnapshot[],
): void {
  new Gauge({
    name: "openmcp_engine_cluster_snapshots_not_removed",
    help: "Deleted ClusterSnapshots whose data is still in their store, by reason (Removing, InUse, StorageUnreachable, StorageAccessDenied, CredentialsNotFound, RemoveFailed)",
    labelNames: ["reason"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of snapshots()) {
        if (!snapshot.metadata.deletionTimestamp) continue;
        const removed = snapshot.status?.conditions?.find((c) => c.type === SNAPSHOT_CONDITIONS.removed);
        if (removed?.status === "False") this.inc({ reason: removed.reason });
      }
    },
  });
}
