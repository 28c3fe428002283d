/**
 * Snapshots of a cluster's control plane as the backend contract speaks of them (contract 1.7): where one is
 * kept, what its manifest says, and the error a backend throws for a snapshot it must not restore.
 */

/**
 * Where snapshots are kept. A folder now; an S3-compatible object store is the next kind of location (a field
 * `s3` beside `folder`, one of the two set), read and written by the same store interface.
 */
export interface SnapshotLocation {
  /** An absolute folder on the engine's machine; each snapshot is a folder of its own inside it. */
  readonly folder: string;
}

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

/**
 * Thrown by `snapshot`/`restore` (contract 1.7) for a snapshot that must not be restored; the engine shows
 * `reason` and the message on the snapshot and does not retry. Any other error is retried.
 */
export class SnapshotRejectedError extends Error {
  override readonly name = "SnapshotRejectedError";
  readonly reason: SnapshotRejection;

  constructor(reason: SnapshotRejection, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Whether `error` is a {@link SnapshotRejectedError} (by name too: a backend package may bring its own copy of the class). */
export function isSnapshotRejection(error: unknown): error is SnapshotRejectedError {
  return error instanceof Error && error.name === "SnapshotRejectedError" && "reason" in error;
}
