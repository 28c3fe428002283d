/** `new-backend`: package names it takes, the names it derives, and the files it writes (all placeholders filled). */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BACKEND_CONTRACT_VERSION } from "../../../src/api/backend-contract.ts";
import { backendScaffold, writeBackendPackage } from "../../../src/cli/new-backend.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const folder = mkdtempSync(join(tmpdir(), "new-backend-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const engineManifest = JSON.parse(readFileSync(join(import.meta.dirname, "../../../package.json"), "utf8"));
const engineVersion = engineManifest.version;

describe("backendScaffold", () => {
  it.each([
    ["vm-pool", "vm-pool", "VmPoolBackend"],
    ["@acme/cloud-backend", "cloud-backend", "CloudBackend"],
    ["3d.cloud", "3d.cloud", "_3dCloudBackend"],
  ])("%s: backend name %s, class %s", (name, backendName, className) => {
    expect(backendScaffold(name)).toEqual({
      packageName: name,
      backendName,
      className,
      engineDependency: `^${engineVersion}`,
      engineVersion,
      contractVersion: BACKEND_CONTRACT_VERSION,
      nodeVersion: engineManifest.devDependencies.node,
    });
  });

  it.each(["My-Backend", "", "@acme/", "cloud backend", ".hidden", "a".repeat(215)])(
    "refuses %j, which npm would refuse",
    (name) => {
      expect(() => backendScaffold(name)).toThrow(UsageError);
    },
  );

  it("takes the engine dependency as given (e.g. a packed tarball)", () => {
    expect(backendScaffold("x", "file:../e.tgz").engineDependency).toBe("file:../e.tgz");
  });
});

describe("writeBackendPackage", () => {
  it("writes the package with every placeholder filled and .gitignore under its own name", async () => {
    const directory = join(folder, "made");
    const files = await writeBackendPackage(directory, backendScaffold("@acme/cloud-backend", "file:e.tgz"));
    expect(files).toEqual(
      expect.arrayContaining([
        ".gitignore",
        "package.json",
        "tsconfig.json",
        "README.md",
        "src/index.ts",
        "src/in-memory-cloud.ts",
        "test/conformance.test.ts",
        "scripts/check-node.mjs",
      ]),
    );
    for (const file of files) expect(readFileSync(join(directory, file), "utf8")).not.toMatch(/__[A-Z_]+__/);
    expect(JSON.parse(readFileSync(join(directory, "package.json"), "utf8"))).toMatchObject({
      name: "@acme/cloud-backend",
      engines: engineManifest.engines,
      peerDependencies: { "openmcp-engine": `^${engineVersion}` },
      // It brings the Node the engine is tested on, as the engine's own repository does.
      devDependencies: { "openmcp-engine": "file:e.tgz", node: engineManifest.devDependencies.node },
      allowScripts: { node: true },
      scripts: { pretest: "node scripts/check-node.mjs" },
    });
    expect(readFileSync(join(directory, ".gitignore"), "utf8").split("\n")).toEqual(
      expect.arrayContaining(["node_modules/", "dist/", ".state/"]),
    );
    expect(readFileSync(join(directory, "src/index.ts"), "utf8")).toContain(
      'readonly name = "cloud-backend";',
    );
  });

  it("its Node check says in one line which Node it needs and which it found, under an older Node", async () => {
    const directory = join(folder, "old-node");
    await writeBackendPackage(directory, backendScaffold("vm-pool"));
    const old = spawnSync("/usr/bin/node", [join(directory, "scripts", "check-node.mjs")], {
      encoding: "utf8",
    });
    const version = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).stdout.trim().slice(1);
    expect(old.status).toBe(1);
    expect(old.stderr).toBe(
      `vm-pool needs Node.js ${engineManifest.engines.node.slice(2)} or later, but this is Node.js ${version} (/usr/bin/node); npm install brings one (the node dev dependency), or run it with a newer node.\n`,
    );
    const current = spawnSync(process.execPath, [join(directory, "scripts", "check-node.mjs")], {
      encoding: "utf8",
    });
    expect(current.status, current.stderr).toBe(0);
  });

  it("refuses a folder that holds something, and leaves it as it was", async () => {
    const directory = join(folder, "taken");
    mkdirSync(directory);
    writeFileSync(join(directory, "mine.txt"), "keep");
    await expect(writeBackendPackage(directory, backendScaffold("x"))).rejects.toThrow(
      /exists and is not empty/,
    );
    expect(readFileSync(join(directory, "mine.txt"), "utf8")).toBe("keep");
  });
});
