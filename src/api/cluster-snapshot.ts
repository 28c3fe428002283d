/** The ClusterSnapshot kind (engine.openmcp.cloud/v1alpha1): a snapshot of one Cluster's control plane, and rollbacks to it. */
import type { StoredStateStatus, TypedObject } from "./common.ts";
import type { CLUSTER_SNAPSHOT_API_VERSION } from "./constants/cluster-snapshot.ts";

/** A bucket of an S3-compatible object store, and the Secret (of the snapshot's namespace) with its credentials. */
export interface SnapshotS3Storage {
  /** The store's URL, e.g. `https://s3.eu-central-1.amazonaws.com`. */
  readonly endpoint: string;
  readonly bucket: string;
  /** Key prefix the snapshot's objects go under (`<prefix>/<name>-<uid>/<file>`); none: the bucket's top. */
  readonly prefix?: string;
  /** Signing region; default `us-east-1`. */
  readonly region?: string;
  /** The bucket in the URL's path, not its host name (default true: what most S3-compatible stores want). */
  readonly forcePathStyle?: boolean;
  /** A Secret of the snapshot's namespace with keys `accessKeyId` and `secretAccessKey`. */
  readonly credentialsSecretRef: { readonly name: string };
}

/**
 * Where the snapshot is kept. One kind of storage is set: `folder` (the default when `storage` is absent) or `s3`
 * (an S3-compatible object store, credentials from a Secret).
 */
export interface SnapshotStorage {
  /** A folder under the engine's snapshot folder (`<--state-dir>/snapshots`; embedded: `kindSettings.ClusterSnapshot.folder`). */
  readonly folder?: {
    /** Relative path under the engine's snapshot folder (no `..`); default: the snapshot's namespace. */
    readonly path?: string;
  };
  readonly s3?: SnapshotS3Storage;
}

/** What to snapshot, and where to keep it. Immutable: another snapshot is another object. */
export interface ClusterSnapshotSpec {
  /** The Cluster of the snapshot's namespace whose control plane is snapshotted. */
  readonly cluster: { readonly name: string };
  readonly storage?: SnapshotStorage;
}

/** One rollback asked by the restore annotation, and how it went. */
export interface SnapshotRestoreRecord {
  /** The annotation's value it answered. */
  readonly request: string;
  /** RFC 3339. */
  readonly time: string;
  /** `Restored`, or the reason it was refused (`ChecksumMismatch`, `ForeignSnapshot`, `IncompatibleSnapshot`). */
  readonly outcome: string;
  readonly message: string;
}

/**
 * What was taken, where it is and what it was taken from. Its phases: Pending, Taking, Complete, Failed, Restoring;
 * its conditions: `Ready` (taken) and `Restored` (the last rollback), each with a reason and a message.
 */
export interface ClusterSnapshotStatus extends StoredStateStatus {
  /** The Cluster it was taken from: its uid and the endpoint it served at. */
  readonly cluster?: { readonly uid: string; readonly endpoint?: string };
  /** Where it is: the folder (absolute, on the engine's machine) or the bucket, and its name there. */
  readonly location?: {
    readonly folder?: string;
    readonly s3?: { readonly endpoint: string; readonly bucket: string; readonly prefix?: string };
    readonly name: string;
  };
  readonly kubernetesVersion?: string;
  /** RFC 3339. */
  readonly takenAt?: string;
  /** Bytes in all. */
  readonly size?: number;
  /** `sha256:<hex>` over its files' sha256 (see the snapshot's manifest.json). */
  readonly checksum?: string;
  readonly lastRestore?: SnapshotRestoreRecord;
}

/** A snapshot of a Cluster's control plane: namespaced, of a Cluster of its own namespace. */
export interface ClusterSnapshot extends TypedObject<typeof CLUSTER_SNAPSHOT_API_VERSION, "ClusterSnapshot"> {
  readonly spec: ClusterSnapshotSpec;
  readonly status?: ClusterSnapshotStatus;
}
