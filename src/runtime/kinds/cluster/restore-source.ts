/**
 * A Cluster made from a snapshot (a clone, contract 1.7): the ClusterSnapshot its `engine.openmcp.cloud/restore-from`
 * annotation names, read when its create is ordered and given to the backend as `target.restoreFrom`.
 */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { ClusterBackend } from "../../../api/backend-contract.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import {
  CLUSTER_SNAPSHOT_RESOURCE,
  RESTORE_FROM_ANNOTATION,
} from "../../../api/constants/cluster-snapshot.ts";
import { isNotFound } from "../../../api/error-message.ts";
import { recordedReference } from "../../../machines/cluster-snapshot/location.ts";
import { withStorageCredentials } from "../cluster-snapshot/storage-credentials.ts";

/**
 * `target` with `restoreFrom` when the Cluster names a snapshot; `target` as it is otherwise. Throws, with what to do,
 * when the snapshot does not exist, is not Complete yet, or the Cluster's backend cannot restore: the create then
 * fails (the Cluster shows why, and it is retried), and no empty cluster is made in the clone's place.
 */
export async function withRestoreSource(
  cluster: Cluster,
  target: ClusterTarget,
  backend: ClusterBackend,
  kubeConfig: KubeConfig,
): Promise<ClusterTarget> {
  const name = cluster.metadata.annotations?.[RESTORE_FROM_ANNOTATION];
  if (name === undefined) return target;
  const where = `ClusterSnapshot ${target.namespace}/${name} (annotation ${RESTORE_FROM_ANNOTATION})`;
  if (!backend.restore)
    throw new Error(
      `cannot make the Cluster from ${where}: its backend ${backend.name} restores no snapshots`,
    );
  let snapshot: ClusterSnapshot;
  try {
    snapshot = (await kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      ...CLUSTER_SNAPSHOT_RESOURCE,
      namespace: target.namespace,
      name,
    })) as ClusterSnapshot;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    throw new Error(
      `cannot make the Cluster from ${where}: it does not exist; create it, or delete this Cluster and make one without the annotation`,
    );
  }
  const location = snapshot.status?.location;
  if (snapshot.status?.phase !== "Complete" || !location)
    throw new Error(
      `cannot make the Cluster from ${where} yet: it is ${snapshot.status?.phase ?? "new"}, not Complete; the Cluster is made once it is`,
    );
  // The root is unused: a folder snapshot is where its status says, an S3 one where its spec says.
  const reference = recordedReference(snapshot, "/");
  return { ...target, restoreFrom: await withStorageCredentials(reference, kubeConfig) };
}
