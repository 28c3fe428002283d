/**
 * A rollout's snapshots before change, pure: with `spec.snapshots.beforeChange`, a stage asks a Cluster for the
 * version only once a ClusterSnapshot of it made by this run (labelled with the run's uid) is Complete. A missing one
 * is a blocking preflight finding the step answers by making it; one not Complete yet holds the stage; a failed one
 * holds it for a person (delete the snapshot to have it made again, or turn the option off).
 */
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import {
  CLUSTER_SNAPSHOT_API_VERSION,
  CLUSTER_SNAPSHOT_KIND,
  SNAPSHOT_CLUSTER_LABEL,
} from "../../api/constants/cluster-snapshot.ts";
import { ROLLOUT_REASONS, ROLLOUT_SNAPSHOT_LABELS } from "../../api/constants/rollout.ts";
import type { Rollout, RolloutTarget } from "../../api/rollout.ts";
import type { PreflightFinding } from "./preflight.ts";

/** The ClusterSnapshot this run takes of `target` before asking it: `<rollout>-<cluster>-<first 8 of the run's uid>`. */
export function snapshotBeforeChange(rollout: Rollout, target: RolloutTarget): ClusterSnapshot {
  const uid = rollout.metadata.uid ?? "";
  const storage = rollout.spec.snapshots?.storage;
  return {
    apiVersion: CLUSTER_SNAPSHOT_API_VERSION,
    kind: CLUSTER_SNAPSHOT_KIND,
    metadata: {
      name: `${rollout.metadata.name}-${target.name}-${uid.slice(0, 8)}`,
      namespace: rollout.metadata.namespace ?? "",
      labels: {
        [ROLLOUT_SNAPSHOT_LABELS.rollout]: rollout.metadata.name ?? "",
        [ROLLOUT_SNAPSHOT_LABELS.rolloutUid]: uid,
        [SNAPSHOT_CLUSTER_LABEL]: target.name,
      },
    },
    spec: { cluster: { name: target.name }, ...(storage ? { storage } : {}) },
  };
}

/** The snapshot of `target` by this run among `snapshots` (matched by the run's uid and the Cluster's name). */
function snapshotOf(
  rollout: Rollout,
  target: RolloutTarget,
  snapshots: readonly ClusterSnapshot[],
): ClusterSnapshot | undefined {
  return snapshots.find(
    (snapshot) =>
      snapshot.metadata.labels?.[ROLLOUT_SNAPSHOT_LABELS.rolloutUid] === rollout.metadata.uid &&
      snapshot.spec.cluster.name === target.name &&
      !snapshot.metadata.deletionTimestamp,
  );
}

/** The finding on `target` (none when the option is off or its snapshot is Complete). */
export function snapshotFindings(
  rollout: Rollout,
  target: RolloutTarget,
  snapshots: readonly ClusterSnapshot[],
): PreflightFinding[] {
  if (rollout.spec.snapshots?.beforeChange !== true) return [];
  const found = snapshotOf(rollout, target, snapshots);
  const name = snapshotBeforeChange(rollout, target).metadata.name;
  const block = (reason: string, message: string) => [
    { cluster: target.name, reason, message, blocks: true },
  ];
  if (!found)
    return block(
      ROLLOUT_REASONS.SnapshotMissing,
      `Cluster ${target.name}: its snapshot before the change (ClusterSnapshot ${name}) is being made`,
    );
  const phase = found.status?.phase;
  if (phase === "Complete") return [];
  if (phase === "Failed")
    return block(
      ROLLOUT_REASONS.SnapshotFailed,
      `Cluster ${target.name}: its snapshot before the change (ClusterSnapshot ${found.metadata.name}) failed: ${
        found.status?.conditions?.find((c) => c.type === "Ready")?.message ?? "see the snapshot"
      }; delete it to have it made again, or set snapshots.beforeChange to false`,
    );
  return block(
    ROLLOUT_REASONS.SnapshotPending,
    `Cluster ${target.name}: its snapshot before the change (ClusterSnapshot ${found.metadata.name}) is ${phase ?? "new"}, not Complete yet`,
  );
}
