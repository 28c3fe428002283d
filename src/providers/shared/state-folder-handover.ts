/**
 * A backend's per-cluster state folder as the entries of a hand-over Secret (backend contract 1.5,
 * `exportCluster`/`importCluster`), for backends that keep a cluster's records as small text files.
 * Secret keys allow no `/`: a file in a sub-folder is keyed `<folder>__<file>`.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";

const SEPARATOR = "__";
/** A Secret holds at most 1 MiB; a hand-over stays well below it. */
const MAX_FILE_BYTES = 256 * 1024;

/** Every file of `folder` (recursively) but those `skip` names (relative paths), as text entries. */
export function exportStateFolder(folder: string, skip: readonly string[] = []): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      const key = relative(folder, path).split(sep).join(SEPARATOR);
      if (skip.includes(relative(folder, path))) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        if (statSync(path).size > MAX_FILE_BYTES)
          throw new Error(
            `${relative(folder, path)} is larger than ${MAX_FILE_BYTES} bytes: too large to hand over`,
          );
        entries[key] = readFileSync(path, "utf8");
      }
    }
  };
  walk(folder);
  return entries;
}

/**
 * Writes the entries into `folder`, each file only where it is absent: what this instance already holds stays
 * (never older state over newer). Refuses a key that would leave the folder.
 */
export function importStateFolder(folder: string, entries: Readonly<Record<string, string>>): void {
  for (const [key, text] of Object.entries(entries)) {
    const parts = key.split(SEPARATOR);
    if (parts.some((part) => part === "" || part === "." || part === ".." || part.includes("/")))
      throw new Error(`hand-over entry ${JSON.stringify(key)} is not a file name`);
    const path = join(folder, ...parts);
    try {
      statSync(path);
      continue;
    } catch {
      // absent: written below
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomicallySync(path, text);
  }
}
