/** Folder snapshots on a real file system: whole or absent (a write cut short leaves none complete), checked on read. */
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SnapshotRejectedError } from "../../../../src/api/control-plane-snapshot.ts";
import {
  readFolderSnapshot,
  type SnapshotDescription,
  writeFolderSnapshot,
} from "../../../../src/providers/shared/folder-snapshots.ts";

const root = mkdtempSync(join(tmpdir(), "folder-snapshots-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const description: SnapshotDescription = {
  backend: "local",
  cluster: { uid: "u", namespace: "n", name: "c" },
  kubernetesVersion: "1.36.3",
  takenAt: "2026-01-01T00:00:00.000Z",
};

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

const rejection = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SnapshotRejectedError);
  return error as SnapshotRejectedError;
};

describe("a folder snapshot", () => {
  const location = { folder: join(root, "store") };

  it("lists every file with size and sha256, and one checksum over them; reads back whole", async () => {
    const reference = { location, name: "one" };
    const manifest = await writeFolderSnapshot(reference, description, async (add) => {
      await add("etcd.db", chunks("abc", "def"));
      await add("ca.crt", "CERT");
    });
    expect(manifest.files).toEqual([
      { name: "ca.crt", size: 4, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      // sha256("abcdef")
      {
        name: "etcd.db",
        size: 6,
        sha256: "bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721",
      },
    ]);
    expect(manifest).toMatchObject({ size: 10, checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const read = await readFolderSnapshot(reference);
    expect(read.manifest).toEqual(manifest);
    // Idempotent: a complete snapshot of that name is returned as it is, nothing written again.
    const again = await writeFolderSnapshot(reference, { ...description, takenAt: "later" }, async () => {
      throw new Error("not called");
    });
    expect(again).toEqual(manifest);
  });

  it("leaves nothing marked complete when a write breaks off, and a retry finishes", async () => {
    const reference = { location, name: "cut" };
    await expect(
      writeFolderSnapshot(reference, description, async (add) => {
        await add("etcd.db", chunks("part"));
        throw new Error("etcd went away");
      }),
    ).rejects.toThrow(/etcd went away/);
    expect(existsSync(join(location.folder, "cut"))).toBe(false);
    expect(readdirSync(location.folder).filter((name) => name.startsWith(".cut"))).toEqual([]);
    expect((await rejection(readFolderSnapshot(reference))).reason).toBe("ChecksumMismatch");
    // A partial folder a kill -9 left behind (no manifest) is removed by the next write, which completes.
    writeFileSync(join(location.folder, ".cut.partial-deadbeef"), "");
    await writeFolderSnapshot(reference, description, (add) => add("etcd.db", "whole"));
    expect((await readFolderSnapshot(reference)).manifest.files).toHaveLength(1);
    expect(readdirSync(location.folder).filter((name) => name.startsWith(".cut"))).toEqual([]);
  });

  it("is refused as ChecksumMismatch when a file was altered or removed, naming the file", async () => {
    const reference = { location, name: "altered" };
    await writeFolderSnapshot(reference, description, async (add) => {
      await add("etcd.db", "data");
      await add("sa.key", "KEY");
    });
    appendFileSync(join(location.folder, "altered", "etcd.db"), "!");
    const altered = await rejection(readFolderSnapshot(reference));
    expect(altered).toMatchObject({
      reason: "ChecksumMismatch",
      message: expect.stringContaining("etcd.db does not match"),
    });
    rmSync(join(location.folder, "altered", "sa.key"));
    writeFileSync(join(location.folder, "altered", "etcd.db"), "data");
    expect((await rejection(readFolderSnapshot(reference))).message).toMatch(/sa.key is missing/);
  });

  it("refuses names that would leave its location", async () => {
    await expect(
      writeFolderSnapshot({ location, name: "../x" }, description, async () => {}),
    ).rejects.toThrow(/snapshot name/);
  });
});
