/**
 * The snapshot store a backend uses (contract 1.7): the folder store or the S3 one, by the reference's location.
 * Both keep a snapshot whole or absent (the manifest last) and check every file before it is read.
 */
import {
  type SnapshotManifest,
  type SnapshotReference,
  SnapshotRejectedError,
} from "../../api/control-plane-snapshot.ts";
import {
  readFolderSnapshot,
  removeFolderSnapshot,
  type SnapshotDescription,
  type SnapshotFileWriter,
  type StoredSnapshot,
  writeFolderSnapshot,
} from "./folder-snapshots.ts";
import { readS3Snapshot, removeS3Snapshot, writeS3Snapshot } from "./s3-snapshots.ts";

/**
 * Writes snapshot `reference` (see folder-snapshots.ts and s3-snapshots.ts); `staging` is an owner-only folder of the
 * backend's where a snapshot bound for an object store is made first.
 */
export function writeSnapshot(
  reference: SnapshotReference,
  description: SnapshotDescription,
  fill: (add: SnapshotFileWriter) => Promise<void>,
  staging: string,
): Promise<SnapshotManifest> {
  const { location, name } = reference;
  return location.s3
    ? writeS3Snapshot({ location: { s3: location.s3 }, name }, description, fill, staging)
    : writeFolderSnapshot({ location: { folder: location.folder }, name }, description, fill);
}

/** Reads snapshot `reference`, every file checked against its manifest; release it when done. */
export function readSnapshot(reference: SnapshotReference, staging: string): Promise<StoredSnapshot> {
  const { location, name } = reference;
  return location.s3
    ? readS3Snapshot({ location: { s3: location.s3 }, name }, staging)
    : readFolderSnapshot({ location: { folder: location.folder }, name });
}

/**
 * Removes snapshot `reference` from its store, manifest first (what a deleted ClusterSnapshot leaves is removed by
 * the engine, not the backend: a snapshot outlives its Cluster and its backend). Idempotent; throws
 * `SnapshotStorageError` when the store cannot be used.
 */
export function removeSnapshot(reference: SnapshotReference): Promise<void> {
  const { location, name } = reference;
  return location.s3
    ? removeS3Snapshot({ location: { s3: location.s3 }, name })
    : removeFolderSnapshot({ location: { folder: location.folder }, name });
}

/** {@link readSnapshot}, refused (`IncompatibleSnapshot`) unless backend `backend` took it: a backend restores its own. */
export async function readOwnSnapshot(
  reference: SnapshotReference,
  backend: string,
  staging: string,
): Promise<StoredSnapshot> {
  const stored = await readSnapshot(reference, staging);
  if (stored.manifest.backend !== backend) {
    await stored.release();
    throw new SnapshotRejectedError(
      "IncompatibleSnapshot",
      `snapshot ${reference.name} was taken by backend ${stored.manifest.backend}; the ${backend} backend restores only its own`,
    );
  }
  return stored;
}
