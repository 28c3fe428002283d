/**
 * Snapshots of a cluster's control plane as the backend contract speaks of them (contract 1.7): where one is
 * kept, what its manifest says, and the error a backend throws for a snapshot it must not restore.
 */

/** The keys of an S3 account, read by the engine from a Secret: never in a status, log, Event or error. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** A bucket of an S3-compatible object store; each snapshot is the objects under `<prefix>/<name>/`. */
export interface S3SnapshotLocation {
  /** The store's URL, e.g. `https://s3.eu-central-1.amazonaws.com` or `http://127.0.0.1:7070`. */
  readonly endpoint: string;
  readonly bucket: string;
  /** Key prefix (no leading or trailing `/`); none: snapshots at the bucket's top. */
  readonly prefix?: string;
  /** Signing region; default `us-east-1`. */
  readonly region?: string;
  /** Bucket in the path (`<endpoint>/<bucket>/…`) rather than the host name; most S3-compatible stores want it. */
  readonly forcePathStyle: boolean;
  /** `<namespace>/<name>` of the Secret the credentials come from: for messages only. */
  readonly credentialsSecret: string;
  /** Added by the engine just before a backend is called (the Secret's keys); absent in anything recorded. */
  readonly credentials?: S3Credentials;
}

/** Where snapshots are kept: a folder on the engine's machine, or a bucket of an S3-compatible store (one of the two). */
export type SnapshotLocation =
  | {
      /** An absolute folder on the engine's machine; each snapshot is a folder of its own inside it. */
      readonly folder: string;
      readonly s3?: undefined;
    }
  | { readonly s3: S3SnapshotLocation; readonly folder?: undefined };

/** One snapshot: the location and its name there (`[A-Za-z0-9._-]`, unique per snapshot taken). */
export interface SnapshotReference {
  readonly location: SnapshotLocation;
  readonly name: string;
}

/** One file of a snapshot, as its manifest lists it. */
export interface SnapshotFile {
  /** File name inside the snapshot (no folders). */
  readonly name: string;
  readonly size: number;
  /** Hex sha256 of the file's bytes. */
  readonly sha256: string;
}

/**
 * What a snapshot holds, written last (`manifest.json`): a snapshot without one, or whose files do not match
 * it, is not complete. `checksum` is the sha256 of the file list (`<sha256>  <name>` lines, sorted by name),
 * so one value names the whole snapshot.
 */
export interface SnapshotManifest {
  /** The manifest's own format; readers refuse one they do not know. */
  readonly format: 1;
  /** The backend that took it (and the only one that may restore it). */
  readonly backend: string;
  /** The Cluster it was taken from: its uid, name and the endpoint it served at. */
  readonly cluster: {
    readonly uid: string;
    readonly namespace: string;
    readonly name: string;
    readonly endpoint?: string;
  };
  /** As the control plane reported it, e.g. `1.36.3`. */
  readonly kubernetesVersion: string;
  /** RFC 3339. */
  readonly takenAt: string;
  readonly files: readonly SnapshotFile[];
  /** Total bytes of the files. */
  readonly size: number;
  /** `sha256:<hex>` over the file list (see above). */
  readonly checksum: string;
}

/** Why a backend refuses to restore a snapshot: nothing was changed, and trying again cannot help. */
export type SnapshotRejection =
  /** A file is missing or its bytes do not match the manifest, or there is no manifest (an unfinished snapshot). */
  | "ChecksumMismatch"
  /** Taken from another cluster (its certificate authority or service-account keys are not this cluster's). */
  | "ForeignSnapshot"
  /** Of another backend, or a manifest format this backend does not read. */
  | "IncompatibleSnapshot";

/** A failure about a snapshot that the engine shows on the ClusterSnapshot as `reason`, with the message. */
export abstract class SnapshotReasonError<Reason extends string> extends Error {
  readonly reason: Reason;

  constructor(reason: Reason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Thrown by `snapshot`/`restore` (contract 1.7) for a snapshot that must not be restored; the engine shows
 * `reason` and the message on the snapshot and does not retry. Any other error is retried.
 */
export class SnapshotRejectedError extends SnapshotReasonError<SnapshotRejection> {
  override readonly name = "SnapshotRejectedError";
}

/** Why the snapshot's storage cannot be used; the engine shows the reason on the snapshot (retried meanwhile). */
export type SnapshotStorageFailure =
  /** The store refused the credentials (unknown key, wrong secret, or no permission on the bucket). */
  | "StorageAccessDenied"
  /** The bucket does not exist. */
  | "StorageBucketMissing"
  /** The store does not answer (DNS, connection refused, timeout, TLS). */
  | "StorageUnreachable"
  /** The Secret with the store's credentials, or one of its keys, is missing. */
  | "CredentialsNotFound";

/** Thrown when a snapshot's storage cannot be used; its message names the store and bucket, never a key. */
export class SnapshotStorageError extends SnapshotReasonError<SnapshotStorageFailure> {
  override readonly name = "SnapshotStorageError";
}

/** Whether `error` is a {@link SnapshotStorageError} (by name too, as {@link isSnapshotRejection}). */
export function isSnapshotStorageFailure(error: unknown): error is SnapshotStorageError {
  return error instanceof Error && error.name === "SnapshotStorageError" && "reason" in error;
}

/** Where a snapshot is, for messages: its folder, or `s3://<bucket>/<prefix>` at the endpoint (never credentials). */
export function describeSnapshotLocation(location: SnapshotLocation): string {
  if (!location.s3) return location.folder;
  const { endpoint, bucket, prefix } = location.s3;
  return `s3://${bucket}/${prefix ? `${prefix}/` : ""} at ${endpoint}`;
}

/** Whether `error` is a {@link SnapshotRejectedError} (by name too: a backend package may bring its own copy of the class). */
export function isSnapshotRejection(error: unknown): error is SnapshotRejectedError {
  return error instanceof Error && error.name === "SnapshotRejectedError" && "reason" in error;
}
