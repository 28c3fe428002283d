/** The ClusterSnapshot kind as the engine registers it: resource, machine, statechart, guards in words. */
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import { CLUSTER_SNAPSHOT_KIND, CLUSTER_SNAPSHOT_RESOURCE } from "../../api/constants/cluster-snapshot.ts";
import { conditionsInWords, type Explanation } from "../shared/explanation.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { clusterSnapshotMachine } from "./machine.ts";

/** The ClusterSnapshot kind. */
export const CLUSTER_SNAPSHOT_DEFINITION = machineDefinition(CLUSTER_SNAPSHOT_KIND, {
  resource: CLUSTER_SNAPSHOT_RESOURCE,
  shortNames: ["csnap"],
  machine: clusterSnapshotMachine,
  guardPhrases: {
    isTaken: "the snapshot is written whole (recorded, or just taken)",
    isNotTaken: "the snapshot is not written yet",
    isClusterMissing: "no Cluster of that name exists in the snapshot's namespace",
    isUnsupported: "the Cluster's backend takes no snapshots",
    isClusterReady: "the Cluster is Ready",
    isRestoreRequested: "the restore annotation carries a value not answered yet",
    isRestoreAnswered: "the asked rollback was carried out or refused",
    isRestoreWithdrawn: "the restore annotation was removed",
    lacksFinalizer: "our finalizer is not on the snapshot yet",
    isBeingDeleted: "its deletion was asked",
    isDeletedInUse: "its deletion was asked while a Cluster is being made from it",
    isInUse: "a Cluster is being made from it (restore-from, not made yet)",
    isNotInUse: "no Cluster is being made from it",
    isDataLeft: "its data is still in the store",
    isDataRemoved: "its data was removed from the store",
    withoutOurFinalizer: "our finalizer is not on it (removed by a person, or never set)",
  },
});

/** A snapshot explained from what it stores. */
export function explainClusterSnapshot(snapshot: ClusterSnapshot): Explanation {
  const status = snapshot.status;
  const why = conditionsInWords(status?.conditions);
  const location = status?.location;
  if (location?.s3)
    why.push(
      `stored as s3://${location.s3.bucket}/${location.s3.prefix ? `${location.s3.prefix}/` : ""}${location.name}/ at ${location.s3.endpoint}`,
    );
  else if (location) why.push(`stored as ${location.folder}/${location.name}`);
  if (status?.lastRestore)
    why.push(
      `last restore: ${status.lastRestore.outcome} (request ${status.lastRestore.request}, ${status.lastRestore.time})`,
    );
  const waitingFor =
    status?.state === "pending"
      ? [`Cluster ${snapshot.spec.cluster.name} to be Ready`]
      : status?.state === "taking"
        ? ["the backend to write the snapshot"]
        : status?.state === "restoring"
          ? ["the backend to roll the Cluster back"]
          : status?.state === "deleting.held"
            ? ["the Cluster made from it (restore-from) to be made or deleted"]
            : status?.state === "deleting.removing"
              ? ["its data to be removed from the store"]
              : [];
  return { state: status?.state, phase: status?.phase, why, waitingFor };
}
