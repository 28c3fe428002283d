import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { holdFileLocks, locksOf, withMachineLock } from "../../support/machine-locks.ts";

const KIND_NODES_FILE = "/repo/test/integration/kind-day-two.heavy.test.ts";

describe("the machine locks a test file holds", () => {
  let cache: string;
  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), "machine-locks-"));
    vi.stubEnv("XDG_CACHE_HOME", cache);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(cache, { recursive: true, force: true });
  });

  it("keep a second holder of kind-nodes out until the first releases, naming the lock", async () => {
    const first = await holdFileLocks(KIND_NODES_FILE, 0);
    await expect(holdFileLocks("/repo/test/integration/kind-landscape.heavy.test.ts", 0)).rejects.toThrow(
      /kind-nodes lock .* was held by another test file/,
    );
    await first();
    const second = await holdFileLocks("/repo/test/integration/kind-landscape.heavy.test.ts", 0);
    await second();
  });

  it("let two files hold docker-nodes at once, and keep a third out until one releases", async () => {
    const files = ["kind-metallb", "kind-clusters", "kind-restart"].map(
      (name) => `/repo/test/integration/${name}.heavy.test.ts`,
    );
    const first = await holdFileLocks(files[0] ?? "", 0);
    const second = await holdFileLocks(files[1] ?? "", 0);
    await expect(holdFileLocks(files[2] ?? "", 0)).rejects.toThrow(
      /docker-nodes lock .* was held by 2 other test files/,
    );
    await second();
    const third = await holdFileLocks(files[2] ?? "", 0);
    await Promise.all([first(), third()]);
  });

  it("run a part of a file alone on the machine, and let the next one in when it ends, failed or not", async () => {
    let inside = false;
    const part = withMachineLock("kind-boot", 0, async () => {
      inside = true;
      await expect(withMachineLock("kind-boot", 0, async () => "beside")).rejects.toThrow(
        /kind-boot lock .* was held by another test file/,
      );
      throw new Error("the boot failed");
    });
    await expect(part).rejects.toThrow("the boot failed");
    expect(inside).toBe(true);
    expect(await withMachineLock("kind-boot", 0, async () => "next")).toBe("next");
  });

  it("leave capd to the Cluster API stack, which takes it itself, and files without a lock free", async () => {
    expect(locksOf("/repo/test/integration/capi-backend.conformance.heavy.test.ts")).toEqual(["capd"]);
    const capd = await holdFileLocks("/repo/test/integration/capi-backend.conformance.heavy.test.ts", 0);
    const again = await holdFileLocks("/repo/test/integration/capi-backend.conformance.heavy.test.ts", 0);
    const none = await holdFileLocks("/repo/test/integration/gardener-backend.heavy.test.ts", 0);
    await Promise.all([capd(), again(), none()]);
  });
});
