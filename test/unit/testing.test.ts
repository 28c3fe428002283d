/** `openmcp-engine/testing` finds the kube binaries where a backend author has them (the packed package is tested in backend-package.test.ts). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultAssetsDirectory } from "../../src/testing.ts";

const folder = mkdtempSync(join(tmpdir(), "testing-assets-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("defaultAssetsDirectory", () => {
  it("takes KUBEBUILDER_ASSETS first, the envtest convention", () => {
    expect(defaultAssetsDirectory({ KUBEBUILDER_ASSETS: "/opt/envtest" })).toBe("/opt/envtest");
  });

  it("in a checkout of the engine leaves it to the build script (undefined)", () => {
    const cache = join(folder, "empty-cache");
    expect(defaultAssetsDirectory({ OPENMCP_KUBE_CACHE: cache })).toBeUndefined();
  });
});
