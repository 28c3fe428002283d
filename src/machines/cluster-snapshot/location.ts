/** Where a ClusterSnapshot's files go: a folder under the engine's snapshot folder, or a bucket; named after the object. */
import { join, normalize } from "node:path/posix";
import type { ClusterSnapshot, ClusterSnapshotStatus } from "../../api/cluster-snapshot.ts";
import type { SnapshotReference } from "../../api/control-plane-snapshot.ts";

/**
 * The snapshot's reference: folder `<root>/<spec.storage.folder.path, default the namespace>`, name
 * `<object name>-<uid>` (a snapshot deleted and made again under its name writes a new one, never over the old).
 * A path that would leave `root` (which the CRD refuses already) falls back to the namespace. With `spec.storage.s3`:
 * the bucket, its credentials' Secret named (the runtime adds the keys just before the backend is called).
 */
export function snapshotReference(snapshot: ClusterSnapshot, root: string): SnapshotReference {
  const namespace = snapshot.metadata.namespace ?? "default";
  const name = `${snapshot.metadata.name ?? "snapshot"}-${snapshot.metadata.uid ?? "new"}`;
  const s3 = snapshot.spec.storage?.s3;
  if (s3)
    return {
      location: {
        s3: {
          endpoint: s3.endpoint,
          bucket: s3.bucket,
          ...(s3.prefix ? { prefix: s3.prefix } : {}),
          ...(s3.region ? { region: s3.region } : {}),
          forcePathStyle: s3.forcePathStyle ?? true,
          credentialsSecret: `${namespace}/${s3.credentialsSecretRef.name}`,
        },
      },
      name,
    };
  const asked = snapshot.spec.storage?.folder?.path;
  const relative = asked === undefined ? namespace : normalize(asked);
  const inside = !relative.startsWith("/") && !relative.split("/").includes("..");
  return {
    location: { folder: join(root, inside ? relative : namespace) },
    name,
  };
}

/** The status's record of where `reference` is (no credentials: the spec names their Secret). */
export function recordedLocation(
  reference: SnapshotReference,
): NonNullable<ClusterSnapshotStatus["location"]> {
  const { location, name } = reference;
  if (!location.s3) return { folder: location.folder, name };
  const { endpoint, bucket, prefix } = location.s3;
  return { s3: { endpoint, bucket, ...(prefix ? { prefix } : {}) }, name };
}

/**
 * The snapshot as its status recorded it (a folder snapshot keeps the folder it went to, even if the engine's folder
 * moved since); an S3 one, or one not recorded yet, from its (immutable) spec.
 */
export function recordedReference(snapshot: ClusterSnapshot, root: string): SnapshotReference {
  const recorded = snapshot.status?.location;
  if (recorded?.folder !== undefined && !snapshot.spec.storage?.s3)
    return { location: { folder: recorded.folder }, name: recorded.name };
  const fromSpec = snapshotReference(snapshot, root);
  return recorded ? { ...fromSpec, name: recorded.name } : fromSpec;
}
