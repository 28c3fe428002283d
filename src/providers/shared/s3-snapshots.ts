/**
 * Snapshots kept in a bucket of an S3-compatible object store (contract 1.7): the same two functions as the folder
 * store, on top of it. Each snapshot is the objects `<prefix>/<name>/<file>`; `manifest.json` is uploaded last, so its
 * presence marks the snapshot complete in the bucket as it does in a folder.
 *
 * Flow (write): a manifest already in the bucket is returned as it is (idempotent) → the snapshot is written whole
 * into a staging folder by the folder store (checksums and manifest made once) → each file uploaded, its sha256 sent
 * for the store to check → `manifest.json` last → the staging folder removed. An upload cut short leaves no manifest
 * (so no complete snapshot); the next attempt writes every object again and finishes.
 * Flow (read): the manifest and each file it lists downloaded into a staging folder → the folder store's reader checks
 * every file against the manifest → the caller restores from there and releases it.
 * Flow (remove): `manifest.json` deleted first (the snapshot is not complete from then on), then every other object
 * under `<prefix>/<name>/` (leftovers of uploads cut short too); a snapshot, or a bucket, already gone is no error.
 * Credentials (the location's) sign requests only: errors name the endpoint, bucket and Secret, never a key.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import {
  isSnapshotStorageFailure,
  type S3SnapshotLocation,
  type SnapshotManifest,
  SnapshotRejectedError,
  SnapshotStorageError,
} from "../../api/control-plane-snapshot.ts";
import {
  MANIFEST_FILE,
  readFolderSnapshot,
  type SnapshotDescription,
  type SnapshotFileWriter,
  type StoredSnapshot,
  snapshotFolder,
  writeFolderSnapshot,
} from "./folder-snapshots.ts";

/** A snapshot kept in a bucket: the bucket and its name there. */
export interface S3SnapshotReference {
  readonly location: { readonly s3: S3SnapshotLocation };
  readonly name: string;
}

/** S3 error codes of credentials the store refuses. */
const ACCESS_DENIED = new Set([
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "InvalidToken",
  "ExpiredToken",
  "InvalidSecurity",
]);
/** Node's codes of a store that does not answer. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/**
 * Writes snapshot `reference` into its bucket: `fill` adds the files (see the file's summary), staged under `staging`.
 * Returns the manifest; a snapshot of that name complete in the bucket already is returned unchanged.
 */
export async function writeS3Snapshot(
  reference: S3SnapshotReference,
  description: SnapshotDescription,
  fill: (add: SnapshotFileWriter) => Promise<void>,
  staging: string,
): Promise<SnapshotManifest> {
  const { s3 } = reference.location;
  const client = clientOf(s3);
  try {
    const existing = await downloadManifest(client, reference);
    if (existing) return existing;
    const folder = await stagingFolder(staging, reference.name);
    try {
      const manifest = await writeFolderSnapshot(
        { location: { folder }, name: reference.name },
        description,
        fill,
      );
      const local = join(folder, reference.name);
      for (const file of manifest.files)
        await upload(client, reference, file.name, join(local, file.name), file.size, file.sha256);
      // Last: from here on the snapshot is complete in the bucket.
      const manifestBytes = await readFile(join(local, MANIFEST_FILE));
      await call(s3, "upload the manifest", () =>
        client.send(
          new PutObjectCommand({
            Bucket: s3.bucket,
            Key: keyOf(reference, MANIFEST_FILE),
            Body: manifestBytes,
          }),
        ),
      );
      return manifest;
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  } finally {
    client.destroy();
  }
}

/**
 * Downloads snapshot `reference` into a staging folder under `staging` and checks every file against its manifest
 * (the folder store's reader). Throws {@link SnapshotRejectedError} (`ChecksumMismatch`) for a snapshot without a
 * manifest (missing or unfinished) or with a file that does not match it; {@link SnapshotStorageError} when the
 * store cannot be used. The caller releases the staging copy.
 */
export async function readS3Snapshot(
  reference: S3SnapshotReference,
  staging: string,
): Promise<StoredSnapshot> {
  const { s3 } = reference.location;
  const client = clientOf(s3);
  let folder: string | undefined;
  try {
    const manifest = await downloadManifest(client, reference);
    if (!manifest)
      throw new SnapshotRejectedError(
        "ChecksumMismatch",
        `snapshot ${reference.name} has no ${MANIFEST_FILE} in s3://${s3.bucket}/${keyOf(reference, "")} at ${s3.endpoint}: it is missing or was never finished`,
      );
    folder = await stagingFolder(staging, reference.name);
    const local = join(folder, reference.name);
    await mkdir(local, { mode: 0o700 });
    for (const file of [...manifest.files.map((each) => each.name), MANIFEST_FILE])
      await download(client, reference, file, join(local, file)); // a missing one stays missing: the reader names it
    const stored = await readFolderSnapshot({ location: { folder }, name: reference.name });
    const release = folder;
    return { ...stored, release: () => rm(release, { recursive: true, force: true }) };
  } catch (error) {
    if (folder) await rm(folder, { recursive: true, force: true });
    throw error;
  } finally {
    client.destroy();
  }
}

/**
 * Removes snapshot `reference` from its bucket (see the file's summary): idempotent. Throws
 * {@link SnapshotStorageError} when the store cannot be used (refused credentials, no answer), naming the store.
 */
export async function removeS3Snapshot(reference: S3SnapshotReference): Promise<void> {
  const { s3 } = reference.location;
  const client = clientOf(s3);
  try {
    const remove = (key: string) =>
      call(s3, `delete ${key}`, () => client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key })));
    await remove(keyOf(reference, MANIFEST_FILE));
    let token: string | undefined;
    do {
      const page = await call(s3, `list the objects of snapshot ${reference.name}`, () =>
        client.send(
          new ListObjectsV2Command({
            Bucket: s3.bucket,
            Prefix: keyOf(reference, ""),
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const object of page.Contents ?? []) if (object.Key) await remove(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (error) {
    // No bucket: nothing of the snapshot can be left in it.
    if (isSnapshotStorageFailure(error) && error.reason === "StorageBucketMissing") return;
    throw error;
  } finally {
    client.destroy();
  }
}

/**
 * The {@link SnapshotStorageError} an S3 call's `error` means (access denied, no bucket, no answer), naming the
 * endpoint, bucket and credentials' Secret; undefined for any other error.
 */
export function storageFailureOf(error: unknown, s3: S3SnapshotLocation): SnapshotStorageError | undefined {
  const code = errorCode(error);
  const where = `the S3 store at ${s3.endpoint}, bucket ${s3.bucket}`;
  if (code !== undefined && ACCESS_DENIED.has(code))
    return new SnapshotStorageError(
      "StorageAccessDenied",
      `${where} refused the credentials of Secret ${s3.credentialsSecret} (${code}): check its accessKeyId and secretAccessKey, and that they may read and write the bucket`,
    );
  if (code === "NoSuchBucket")
    return new SnapshotStorageError(
      "StorageBucketMissing",
      `${where}: the bucket does not exist (NoSuchBucket); create it, or name an existing one in spec.storage.s3.bucket`,
    );
  if (code !== undefined && (UNREACHABLE.has(code) || code === "TimeoutError"))
    return new SnapshotStorageError("StorageUnreachable", `${where} does not answer (${code})`);
  return undefined;
}

/** The S3 error code (`Code`, the SDK's error name) or Node's system error code of `error` or its cause. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const fields = current as Error & { Code?: unknown; code?: unknown; errors?: unknown };
    if (typeof fields.Code === "string") return fields.Code;
    if (typeof fields.code === "string" && UNREACHABLE.has(fields.code)) return fields.code;
    if (Array.isArray(fields.errors) && fields.errors[0] instanceof Error) {
      current = fields.errors[0]; // an AggregateError of a failed connect (IPv4 and IPv6)
      continue;
    }
    if (current.name !== "Error" && current.name !== "AggregateError" && current.cause === undefined)
      return current.name;
    current = current.cause;
  }
  return undefined;
}

/** Runs S3 call `what`, turning its failure into a {@link SnapshotStorageError} or an error without any key in it. */
async function call<T>(s3: S3SnapshotLocation, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const failure = storageFailureOf(error, s3);
    if (failure) throw failure;
    const text =
      error instanceof Error ? `${errorCode(error) ?? error.name}: ${error.message}` : String(error);
    throw new Error(
      `cannot ${what} at the S3 store ${s3.endpoint}, bucket ${s3.bucket}: ${redact(text, s3)}`,
    );
  }
}

/** `text` without the location's keys (an S3 error may quote what it was given). */
function redact(text: string, s3: S3SnapshotLocation): string {
  let out = text;
  for (const secret of [s3.credentials?.secretAccessKey, s3.credentials?.accessKeyId])
    if (secret) out = out.split(secret).join("***");
  return out;
}

function clientOf(s3: S3SnapshotLocation): S3Client {
  if (!s3.credentials)
    throw new SnapshotStorageError(
      "CredentialsNotFound",
      `no credentials for the S3 store at ${s3.endpoint} (Secret ${s3.credentialsSecret} was not read)`,
    );
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region || "us-east-1",
    forcePathStyle: s3.forcePathStyle,
    credentials: s3.credentials,
    maxAttempts: 3,
    // Checksums only where S3 requires them: S3-compatible stores differ in the newer ones; each file's sha256 is sent.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
  });
}

/** Object key of `file` of the snapshot. */
function keyOf(reference: S3SnapshotReference, file: string): string {
  const prefix = reference.location.s3.prefix?.replace(/^\/+|\/+$/g, "");
  return `${prefix ? `${prefix}/` : ""}${reference.name}/${file}`;
}

/** An owner-only folder under `staging` for one snapshot (its name checked as the folder store checks it). */
async function stagingFolder(staging: string, name: string): Promise<string> {
  snapshotFolder({ location: { folder: staging }, name });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  return mkdtemp(join(staging, `${name}-`));
}

/** The snapshot's manifest in the bucket; undefined when there is none (never written, or cut short). */
async function downloadManifest(
  client: S3Client,
  reference: S3SnapshotReference,
): Promise<SnapshotManifest | undefined> {
  const { s3 } = reference.location;
  const text = await call(s3, `read ${MANIFEST_FILE} of snapshot ${reference.name}`, async () => {
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: keyOf(reference, MANIFEST_FILE) }),
      );
      return await answer.Body?.transformToString("utf8");
    } catch (error) {
      if (errorCode(error) === "NoSuchKey") return undefined;
      throw error;
    }
  });
  if (text === undefined) return undefined;
  const manifest = JSON.parse(text) as SnapshotManifest;
  if (manifest.format !== 1)
    throw new SnapshotRejectedError(
      "IncompatibleSnapshot",
      `snapshot ${reference.name} in bucket ${s3.bucket} has manifest format ${JSON.stringify(manifest.format)}; this engine reads format 1`,
    );
  return manifest;
}

/** Uploads one file of the snapshot, streamed, with its sha256 for the store to check. */
async function upload(
  client: S3Client,
  reference: S3SnapshotReference,
  file: string,
  path: string,
  size: number,
  sha256: string,
): Promise<void> {
  const { s3 } = reference.location;
  await call(s3, `upload ${file} of snapshot ${reference.name}`, () =>
    client.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: keyOf(reference, file),
        Body: createReadStream(path),
        ContentLength: size,
        ChecksumSHA256: Buffer.from(sha256, "hex").toString("base64"),
      }),
    ),
  );
}

/** Downloads one file of the snapshot to `path` (owner-only); a missing object leaves no file. */
async function download(client: S3Client, reference: S3SnapshotReference, file: string, path: string) {
  const { s3 } = reference.location;
  await call(s3, `download ${file} of snapshot ${reference.name}`, async () => {
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: keyOf(reference, file) }),
      );
      await pipeline(answer.Body as Readable, createWriteStream(path, { mode: 0o600 }));
    } catch (error) {
      if (errorCode(error) !== "NoSuchKey") throw error;
    }
  });
}
