/**
 * The snapshot store a backend uses (contract 1.7): the folder store or the S3 one, by the reference's location.
 * Both keep a snapshot whole or absent (the manifest last) and check every file before it is read.
 */
import { basename } from "node:path";
import type { ClusterTarget } from "../../api/backend.ts";
import {
  type SnapshotManifest,
  type SnapshotReference,
  SnapshotRejectedError,
} from "../../api/control-plane-snapshot.ts";
import {
  readFolderSnapshot,
  removeFolderSnapshot,
  type SnapshotDescription,
  type SnapshotFiles,
  type StoredSnapshot,
  writeFolderSnapshot,
} from "./folder-snapshots.ts";
import { readS3Snapshot, removeS3Snapshot, writeS3Snapshot } from "./s3-snapshots.ts";

/** What a backend observed of the Cluster it takes a snapshot of now. */
export interface SnapshotSource {
  /** Where the Cluster serves, when known. */
  readonly endpoint?: string | undefined;
  readonly kubernetesVersion: string;
  /** When the snapshot is taken (ms since the epoch, from the backend's clock). */
  readonly takenAtMs: number;
}

/** The description of a snapshot backend `backend` takes of `target`: it, the Cluster and where it served, its version. */
export function describeSnapshot(
  backend: string,
  target: ClusterTarget,
  source: SnapshotSource,
): SnapshotDescription {
  return {
    backend,
    cluster: {
      uid: target.uid,
      namespace: target.namespace,
      name: target.name,
      ...(source.endpoint ? { endpoint: source.endpoint } : {}),
    },
    kubernetesVersion: source.kubernetesVersion,
    takenAt: new Date(source.takenAtMs).toISOString(),
  };
}

/**
 * Writes snapshot `reference` (see folder-snapshots.ts and s3-snapshots.ts); `staging` is an owner-only folder of the
 * backend's where a snapshot bound for an object store is made first.
 */
export function writeSnapshot(
  reference: SnapshotReference,
  description: SnapshotDescription,
  fill: SnapshotFiles,
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

/** The refusal of a snapshot taken from another cluster: restoring its keys would lock out every client of this one. */
export function foreignSnapshot(stored: StoredSnapshot): SnapshotRejectedError {
  const { namespace, name, uid } = stored.manifest.cluster;
  return new SnapshotRejectedError(
    "ForeignSnapshot",
    `snapshot ${basename(stored.folder)} was taken from Cluster ${namespace}/${name} (uid ${uid}), whose certificate authority or service-account key is not this cluster's: restoring it would lock out every client of this cluster`,
  );
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
