/** Atomic file writes on a real file system: the new content whole, no temporary file left, the old one kept on failure. */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeFileAtomically, writeFileAtomicallySync } from "../../../src/util/atomic-file.ts";
import { folderPerTest } from "../../support/folder-per-test.ts";

const folder = folderPerTest("atomic-file-");

describe.each([
  ["writeFileAtomically", writeFileAtomically],
  [
    "writeFileAtomicallySync",
    async (...args: Parameters<typeof writeFileAtomicallySync>) => writeFileAtomicallySync(...args),
  ],
] as const)("%s", (_, write) => {
  it("creates the file, then replaces it whole, and leaves nothing else in the folder", async () => {
    const path = join(folder(), "state.json");
    await write(path, "first");
    expect(await readFile(path, "utf8")).toBe("first");
    await write(path, "second, longer than the first");
    expect(await readFile(path, "utf8")).toBe("second, longer than the first");
    expect(await readdir(folder())).toEqual(["state.json"]);
  });

  it("gives the new file the mode asked for (credentials: owner only)", async () => {
    const path = join(folder(), "kubeconfig");
    await writeFile(path, "old", { mode: 0o644 });
    await write(path, "secret", { mode: 0o600 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("keeps what was there and removes its temporary file when the rename fails", async () => {
    // A folder where the file should go: the rename over it fails after the temporary file was written.
    const path = join(folder(), "occupied");
    await mkdir(path);
    await writeFile(join(path, "inside"), "kept");
    await expect(write(path, "new")).rejects.toThrow();
    expect(await readdir(folder())).toEqual(["occupied"]);
    expect(await readFile(join(path, "inside"), "utf8")).toBe("kept");
  });

  it("fails without leaving anything when the folder does not exist", async () => {
    await expect(write(join(folder(), "missing", "file"), "x")).rejects.toThrow(/ENOENT/);
    expect(await readdir(folder())).toEqual([]);
  });
});

describe("overlapping writes of one file", () => {
  it("end with one of the contents, whole, and no temporary file", async () => {
    const path = join(folder(), "record.json");
    const contents = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ write: i, padding: "x".repeat(i * 100) }),
    );
    await Promise.all(contents.map((content) => writeFileAtomically(path, content)));
    expect(contents).toContain(await readFile(path, "utf8"));
    expect(await readdir(folder())).toEqual(["record.json"]);
  });
});
