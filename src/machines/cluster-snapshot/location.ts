/** Where a ClusterSnapshot's files go: a folder under the engine's snapshot folder, named after the object. */
import { join, normalize } from "node:path/posix";
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import type { SnapshotReference } from "../../api/control-plane-snapshot.ts";

/**
 * The snapshot's reference: folder `<root>/<spec.storage.folder.path, default the namespace>`, name
 * `<object name>-<uid>` (a snapshot deleted and made again under its name writes a new one, never over the old).
 * A path that would leave `root` (which the CRD refuses already) falls back to the namespace.
 */
export function snapshotReference(snapshot: ClusterSnapshot, root: string): SnapshotReference {
  const namespace = snapshot.metadata.namespace ?? "default";
  const asked = snapshot.spec.storage?.folder?.path;
  const relative = asked === undefined ? namespace : normalize(asked);
  const inside = !relative.startsWith("/") && !relative.split("/").includes("..");
  return {
    location: { folder: join(root, inside ? relative : namespace) },
    name: `${snapshot.metadata.name ?? "snapshot"}-${snapshot.metadata.uid ?? "new"}`,
  };
}
