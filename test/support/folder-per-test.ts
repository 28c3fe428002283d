/** A fresh temporary folder for every test of a file, removed after the test: for tests on a real file system. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/** Registers the hooks (call it at the top of a test file); the function returned gives the running test's folder. */
export function folderPerTest(prefix: string): () => string {
  let path: string | undefined;
  beforeEach(async () => {
    path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (path) await rm(path, { recursive: true, force: true });
    path = undefined;
  });
  return () => {
    if (path === undefined)
      throw new Error(`no folder ${prefix}*: folderPerTest gives one inside a test only`);
    return path;
  };
}
