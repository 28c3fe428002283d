/** Loading a backend module by --backend: what a module must export, and the contract version it must claim. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BACKEND_CONTRACT_VERSION } from "../../../src/api/backend-contract.ts";
import { BackendLoadError, BUILT_IN_BACKENDS, loadBackendFactory } from "../../../src/providers/registry.ts";

const folder = mkdtempSync(join(tmpdir(), "registry-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A backend module file exporting `exports` (JavaScript source), loaded as `--backend ./<name>.mjs`. */
function moduleFile(name: string, exports: string): string {
  writeFileSync(join(folder, `${name}.mjs`), `${exports}\nexport const createBackend = () => ({});\n`);
  return `./${name}.mjs`;
}

describe("loadBackendFactory", () => {
  it.each(BUILT_IN_BACKENDS)(
    "loads the built-in %s, which claims this engine's contract version",
    async (name) => {
      expect(await loadBackendFactory(name)).toBeTypeOf("function");
    },
  );

  it("loads a module built for this contract, or an older minor version of it", async () => {
    const [major] = BACKEND_CONTRACT_VERSION.split(".");
    const same = moduleFile("same", `export const contractVersion = "${BACKEND_CONTRACT_VERSION}";`);
    const older = moduleFile("older", `export const contractVersion = "${major}.0.0";`);
    expect(await loadBackendFactory(same, folder)).toBeTypeOf("function");
    expect(await loadBackendFactory(older, folder)).toBeTypeOf("function");
  });

  it("refuses a module built for another major version, naming both versions", async () => {
    const spec = moduleFile("next-major", 'export const contractVersion = "99.0.0";');
    const error = await loadBackendFactory(spec, folder).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendLoadError);
    expect((error as Error).message).toBe(
      `backend "${spec}" cannot be loaded: it was built for backend contract 99.0.0, this engine implements backend contract ${BACKEND_CONTRACT_VERSION}; major versions differ, so the contract changed in a way the backend cannot follow: use a release of the backend built for ${BACKEND_CONTRACT_VERSION.split(".")[0]}.x, or an engine implementing 99.x`,
    );
  });

  it("refuses a module that does not say which contract it was built for", async () => {
    const spec = moduleFile("unversioned", "");
    await expect(loadBackendFactory(spec, folder)).rejects.toThrow(
      `backend "${spec}" cannot be loaded: it exports no contractVersion; a backend module exports the backend contract version it was built for as contractVersion`,
    );
  });
});
