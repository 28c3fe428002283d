/**
 * Snapshots kept in a folder (contract 1.7): each one a folder of files with `manifest.json` listing their sizes
 * and sha256. Written so that a snapshot is complete or absent, never half there; read only after every file
 * matches its manifest. The one store a backend needs today; an S3-compatible store would offer the same two
 * functions.
 *
 * Flow (write): an earlier complete snapshot of the same name is returned as it is (idempotent) → leftovers of
 * unfinished writes are removed → the files go into `.<name>.partial-<random>` beside it, each hashed while it is
 * written and fsynced → `manifest.json` last, fsynced → the folder renamed to `<name>` and the parent fsynced.
 * Guarantees: a kill -9 at any point leaves either no `<name>` or a whole one; a retry finishes.
 * Flow (remove): the manifest goes first (the snapshot is no longer complete from then on), then its files and any
 * leftovers of unfinished writes; a snapshot already gone is no error, so a retry after a crash finishes.
 */
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type SnapshotFile,
  type SnapshotManifest,
  SnapshotRejectedError,
} from "../../api/control-plane-snapshot.ts";

/** The manifest's file name; its presence marks a snapshot complete. */
export const MANIFEST_FILE = "manifest.json";

const partialMark = ".partial-";

/** A snapshot kept in a folder: its folder and its name there. */
export interface FolderSnapshotReference {
  readonly location: { readonly folder: string };
  readonly name: string;
}

/** What the caller says about a snapshot; the store adds the file list, size and checksum. */
export type SnapshotDescription = Omit<SnapshotManifest, "format" | "files" | "size" | "checksum">;

/** Adds one file to a snapshot being written, from bytes or a stream of them. */
export type SnapshotFileWriter = (
  name: string,
  content: Uint8Array | string | AsyncIterable<Uint8Array>,
) => Promise<void>;

/** What goes into a snapshot: adds each of its files. */
export type SnapshotFiles = (add: SnapshotFileWriter) => Promise<void>;

/** A complete snapshot, read back: its manifest and where each of its files is. */
export interface StoredSnapshot {
  readonly manifest: SnapshotManifest;
  /** The folder holding its files. */
  readonly folder: string;
  path(file: string): string;
  /** Drops what reading it made (a staging copy of a remote snapshot); nothing for a folder's own. */
  release(): Promise<void>;
}

/** The folder of snapshot `reference` (its name checked: it must not leave the location). */
export function snapshotFolder(reference: FolderSnapshotReference): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(reference.name) || reference.name.includes(".."))
    throw new Error(`snapshot name "${reference.name}" must be letters, digits, '.', '_' and '-'`);
  return join(reference.location.folder, reference.name);
}

/**
 * Writes snapshot `reference`: `fill` adds the files, then the manifest makes it complete (see the file's
 * summary). Returns the manifest; a snapshot of that name that is complete already is returned unchanged.
 */
export async function writeFolderSnapshot(
  reference: FolderSnapshotReference,
  description: SnapshotDescription,
  fill: (add: SnapshotFileWriter) => Promise<void>,
): Promise<SnapshotManifest> {
  const final = snapshotFolder(reference);
  const existing = await readManifest(final).catch(() => undefined);
  if (existing) return existing;
  await mkdir(reference.location.folder, { recursive: true });
  await removePartials(reference);
  const partial = join(
    reference.location.folder,
    `.${reference.name}${partialMark}${randomUUID().slice(0, 8)}`,
  );
  await mkdir(partial, { mode: 0o700 });
  try {
    const files: SnapshotFile[] = [];
    await fill(async (name, content) => {
      if (name === MANIFEST_FILE || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
        throw new Error(`"${name}" cannot be a snapshot file's name`);
      files.push(await writeHashed(join(partial, name), content));
    });
    const manifest = manifestOf(description, files);
    await writeHashed(join(partial, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await fsyncPath(partial);
    await rm(final, { recursive: true, force: true }); // only ever an incomplete one: a complete one returned above
    await rename(partial, final);
    await fsyncPath(reference.location.folder);
    return manifest;
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Reads snapshot `reference` and checks every file against its manifest (size and sha256) and the manifest's
 * checksum against its file list. Throws {@link SnapshotRejectedError} (`ChecksumMismatch`) for a missing,
 * unfinished or altered snapshot, (`IncompatibleSnapshot`) for a manifest of a format this engine does not read.
 */
export async function readFolderSnapshot(reference: FolderSnapshotReference): Promise<StoredSnapshot> {
  const folder = snapshotFolder(reference);
  let manifest: SnapshotManifest;
  try {
    manifest = await readManifest(folder);
  } catch (error) {
    if (error instanceof SnapshotRejectedError) throw error;
    throw new SnapshotRejectedError(
      "ChecksumMismatch",
      `snapshot ${reference.name} has no readable ${MANIFEST_FILE} in ${reference.location.folder}: it is missing or was never finished`,
    );
  }
  for (const file of manifest.files) {
    const found = await hashFile(join(folder, file.name)).catch(() => undefined);
    if (!found)
      throw new SnapshotRejectedError(
        "ChecksumMismatch",
        `snapshot ${reference.name}: file ${file.name} is missing`,
      );
    if (found.size !== file.size || found.sha256 !== file.sha256)
      throw new SnapshotRejectedError(
        "ChecksumMismatch",
        `snapshot ${reference.name}: file ${file.name} does not match its manifest (sha256 ${found.sha256.slice(0, 12)}…, ${found.size} bytes; the manifest says ${file.sha256.slice(0, 12)}…, ${file.size} bytes)`,
      );
  }
  if (listChecksum(manifest.files) !== manifest.checksum)
    throw new SnapshotRejectedError(
      "ChecksumMismatch",
      `snapshot ${reference.name}: its manifest's checksum does not match its file list`,
    );
  return { manifest, folder, path: (file) => join(folder, file), release: async () => {} };
}

/**
 * Removes snapshot `reference` and what unfinished writes of it left: its manifest first (so a removal cut short
 * leaves no snapshot that looks complete), then the rest. Nothing there: done (idempotent).
 */
export async function removeFolderSnapshot(reference: FolderSnapshotReference): Promise<void> {
  const folder = snapshotFolder(reference);
  await rm(join(folder, MANIFEST_FILE), { force: true });
  await rm(folder, { recursive: true, force: true });
  if (await readdir(reference.location.folder).catch(() => undefined)) await removePartials(reference);
}

/** The manifest of `description` and `files`: sizes summed, the checksum over the sorted file list. */
function manifestOf(description: SnapshotDescription, files: readonly SnapshotFile[]): SnapshotManifest {
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    format: 1,
    ...description,
    files: sorted,
    size: sorted.reduce((sum, file) => sum + file.size, 0),
    checksum: listChecksum(sorted),
  };
}

/** `sha256:<hex>` of `<sha256>  <name>` lines sorted by name: one value for the whole snapshot. */
function listChecksum(files: readonly SnapshotFile[]): string {
  const lines = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((file) => `${file.sha256}  ${file.name}\n`)
    .join("");
  return `sha256:${createHash("sha256").update(lines).digest("hex")}`;
}

async function readManifest(folder: string): Promise<SnapshotManifest> {
  const manifest = JSON.parse(await readFile(join(folder, MANIFEST_FILE), "utf8")) as SnapshotManifest;
  if (manifest.format !== 1)
    throw new SnapshotRejectedError(
      "IncompatibleSnapshot",
      `snapshot in ${folder} has manifest format ${JSON.stringify(manifest.format)}; this engine reads format 1`,
    );
  return manifest;
}

/** Writes `content` to `path` (owner-only: snapshots hold keys), hashing it on the way, and fsyncs it. */
async function writeHashed(
  path: string,
  content: Uint8Array | string | AsyncIterable<Uint8Array>,
): Promise<SnapshotFile> {
  const hash = createHash("sha256");
  let size = 0;
  const source =
    typeof content === "string" || content instanceof Uint8Array
      ? Readable.from([Buffer.from(content)])
      : Readable.from(content);
  source.on("data", (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
  });
  await pipeline(source, createWriteStream(path, { mode: 0o600 }));
  await fsyncPath(path);
  return { name: path.split("/").at(-1) ?? path, size, sha256: hash.digest("hex") };
}

async function hashFile(path: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest("hex") };
}

/** fsync of a file or folder (a folder's, so a rename or new entry in it survives a crash). */
async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes what unfinished writes of `reference` left behind. */
async function removePartials(reference: FolderSnapshotReference): Promise<void> {
  const prefix = `.${reference.name}${partialMark}`;
  for (const entry of await readdir(reference.location.folder)) {
    if (entry.startsWith(prefix))
      await rm(join(reference.location.folder, entry), { recursive: true, force: true });
  }
}
