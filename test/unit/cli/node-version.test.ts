/** The command says which Node it needs before anything else loads: one line and exit code 1 under an older Node. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeVersionProblem, REQUIRED_NODE } from "../../../src/cli/node-version.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const engines = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node as string;
/** The machine's own Node, older than the engine needs (the project brings its Node as a dev dependency). */
const OLD_NODE = "/usr/bin/node";

describe("nodeVersionProblem", () => {
  it("is what package.json's engines says", () => {
    expect(engines).toBe(`>=${REQUIRED_NODE}`);
  });

  it.each(["22.19.0", "22.20.1", "23.0.0", "24.21.0"])("accepts %s", (found) => {
    expect(nodeVersionProblem("x", found, "/n")).toBeUndefined();
  });

  it.each(["20.20.2", "22.18.9", "18.0.0"])("names the Node needed and the one found for %s", (found) => {
    expect(nodeVersionProblem("openmcp-engine", found, "/usr/bin/node")).toBe(
      `openmcp-engine needs Node.js ${REQUIRED_NODE} or later, but this is Node.js ${found} (/usr/bin/node); run it with a newer node.`,
    );
  });
});

describe("the command's entry under an older Node", () => {
  const folder = mkdtempSync(join(tmpdir(), "node-check-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("prints one line naming both versions and exits 1, before the command loads", () => {
    const old = spawnSync(OLD_NODE, ["--version"], { encoding: "utf8" }).stdout.trim().replace(/^v/, "");
    expect(nodeVersionProblem("x", old, OLD_NODE), `${OLD_NODE} is Node ${old}`).toBeDefined();
    // The entry as tsc emits it (types stripped, imports to .js); dispatch.js is a module that cannot load on old Node.
    for (const name of ["main", "node-version"]) {
      const source = readFileSync(join(root, "src", "cli", `${name}.ts`), "utf8");
      writeFileSync(join(folder, `${name}.js`), stripTypeScriptTypes(source).replaceAll(/\.ts"/g, '.js"'));
    }
    writeFileSync(
      join(folder, "dispatch.js"),
      'import { registerHooks } from "node:module";\nregisterHooks({});\n',
    );
    writeFileSync(join(folder, "package.json"), '{ "type": "module" }');
    const result = spawnSync(OLD_NODE, [join(folder, "main.js"), "--help"], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `openmcp-engine needs Node.js ${REQUIRED_NODE} or later, but this is Node.js ${old} (${OLD_NODE}); run it with a newer node.\n`,
    );
  });
});
