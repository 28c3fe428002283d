/**
 * The ClusterSnapshot kind's metrics: deleted ClusterSnapshots whose data is still in their store, by the reason their
 * Removed condition gives (read from the cache at scrape time: an alert on it finds a store that cannot be reached,
 * or a deletion held).
 */
import type { Registry } from "prom-client";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import { SNAPSHOT_CONDITIONS } from "../../../api/constants/cluster-snapshot.ts";
import { falseReason } from "../../../machines/shared/conditions.ts";
import { countsBy, scrapedGauge } from "../../scraped-gauge.ts";

/** Why a deleted ClusterSnapshot's data is still in its store; undefined for one not deleted, or removed. */
function dataLeftBecause(snapshot: ClusterSnapshot): string | undefined {
  return snapshot.metadata.deletionTimestamp
    ? falseReason(snapshot.status, SNAPSHOT_CONDITIONS.removed)
    : undefined;
}

/** Registers the gauge of deleted ClusterSnapshots whose data is left, reading `snapshots` at each scrape. */
export function registerSnapshotsNotRemoved(
  registry: Registry,
  snapshots: () => readonly ClusterSnapshot[],
): void {
  scrapedGauge(
    registry,
    {
      name: "openmcp_engine_cluster_snapshots_not_removed",
      help: "Deleted ClusterSnapshots whose data is still in their store, by reason (Removing, InUse, StorageUnreachable, StorageAccessDenied, CredentialsNotFound, RemoveFailed)",
      labelNames: ["reason"],
    },
    () =>
      countsBy(
        "reason",
        snapshots().flatMap((snapshot) => dataLeftBecause(snapshot) ?? []),
      ),
  );
}
