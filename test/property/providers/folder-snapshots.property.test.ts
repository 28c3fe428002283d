/**
 * Folder snapshots are what their manifest says, byte for byte: whatever files a snapshot holds (any names, any
 * bytes, streamed in any chunks), reading it back verifies, and changing any one byte of any file, or cutting a
 * file short, is refused as ChecksumMismatch. On a real file system.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { isSnapshotRejection } from "../../../src/api/control-plane-snapshot.ts";
import { readFolderSnapshot, writeFolderSnapshot } from "../../../src/providers/shared/folder-snapshots.ts";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const description = {
  backend: "local",
  cluster: { uid: "u", namespace: "n", name: "c" },
  kubernetesVersion: "1.36.3",
  takenAt: "2026-01-01T00:00:00.000Z",
};

/** Files of a snapshot: distinct names, contents as chunks (some empty). */
const files = fc.uniqueArray(
  fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9._-]{0,11}$/).filter((name) => name !== "manifest.json"),
    chunks: fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 4 }),
  }),
  { minLength: 1, maxLength: 4, selector: (file) => file.name },
);

/** What is done to one file after the snapshot is written. */
const damage = fc.record({
  file: fc.nat(),
  kind: fc.constantFrom("flip", "cut", "none"),
  at: fc.nat(),
});

async function* streamed(chunks: readonly Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

it("reads back what was written, and refuses any changed byte or cut file", async () => {
  const reached = { verified: 0, flipped: 0, cut: 0 };
  const root = await mkdtemp(join(tmpdir(), "folder-snapshots-property-"));
  roots.push(root);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(files, damage, async (snapshotFiles, change) => {
      const reference = { location: { folder: root }, name: `s${run++}` };
      const manifest = await writeFolderSnapshot(reference, description, async (add) => {
        for (const file of snapshotFiles) await add(file.name, streamed(file.chunks));
      });
      const target = snapshotFiles[change.file % snapshotFiles.length];
      const path = join(root, reference.name, target?.name ?? "");
      const bytes = readFileSync(path);
      if (change.kind === "flip" && bytes.length > 0) {
        const at = change.at % bytes.length;
        bytes[at] = (bytes[at] ?? 0) ^ 0xff;
        writeFileSync(path, bytes);
        reached.flipped++;
      } else if (change.kind === "cut" && bytes.length > 0) {
        writeFileSync(path, bytes.subarray(0, change.at % bytes.length));
        reached.cut++;
      } else {
        const read = await readFolderSnapshot(reference);
        expect(read.manifest).toEqual(manifest);
        expect(read.manifest.size).toBe(
          snapshotFiles.reduce((sum, file) => sum + file.chunks.reduce((n, chunk) => n + chunk.length, 0), 0),
        );
        reached.verified++;
        return;
      }
      const refused = await readFolderSnapshot(reference).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isSnapshotRejection(refused) && refused.reason).toBe("ChecksumMismatch");
    }),
    { numRuns: 150 },
  );
  // Every branch was reached: reads that verify, flipped bytes and cut files.
  expect(reached.verified).toBeGreaterThan(0);
  expect(reached.flipped).toBeGreaterThan(0);
  expect(reached.cut).toBeGreaterThan(0);
});
