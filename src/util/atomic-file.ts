/**
 * Atomic file writes: a reader (kube-apiserver reloading its authentication configuration, a backend
 * reading its state after a restart) sees the old file or the new one, never half of either.
 *
 * Flow: write a temporary file beside the target (same folder, so the same file system), then rename it
 * over the target, which POSIX makes atomic. The temporary name is unique per process and write, so two
 * processes or two overlapping writes never share one. A failed write removes its temporary file.
 *
 * Caveats: there is no fsync. The crash these files must survive is a killed process (kill -9, an OOM
 * kill), after which the kernel still writes out what it was given; a power loss may lose the last
 * write. None of the callers keeps anything a fresh reconcile cannot rebuild from the API server and
 * the backend itself, so the cost of an fsync on every write (milliseconds on a busy disk, on the
 * reconcile's path) buys nothing here.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";

/** How the file is written. */
export interface AtomicWriteOptions {
  /** Permission bits of the new file, e.g. `0o600` for credentials; default as `writeFile`'s. */
  readonly mode?: number;
}

let writes = 0;

/** A temporary name beside `path` that no other process, nor another write of this one, uses. */
function temporaryPath(path: string): string {
  writes += 1;
  return `${path}.${process.pid}.${writes}.tmp`;
}

/** Replaces `path` with `data` atomically (see the file's summary). */
export async function writeFileAtomically(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const partial = temporaryPath(path);
  try {
    await writeFile(partial, data, options.mode === undefined ? {} : { mode: options.mode });
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** {@link writeFileAtomically} for synchronous callers (a backend's state saved inside a sync method). */
export function writeFileAtomicallySync(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): void {
  const partial = temporaryPath(path);
  try {
    writeFileSync(partial, data, options.mode === undefined ? {} : { mode: options.mode });
    renameSync(partial, path);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}
