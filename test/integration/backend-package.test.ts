/**
 * A backend from outside the repository, as its author makes one: the engine packed with `npm pack` and
 * installed from the tarball into a project in a temporary folder, a backend package scaffolded there with
 * `new-backend`, its own kit test (passing, then failing with the shrunk sequence once create is no longer
 * idempotent), and `openmcp-engine run --backend <that package>` getting a Cluster to Ready on a real API
 * server; the engine refuses the same package claiming another contract version; a program embedding the
 * engine through `run` of the package's main entry drives a second Cluster. The packed bin under the machine's
 * Node 20 says in one line which Node it needs; `openmcp-engine/testing` starts an API server from the package.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKEND_CONTRACT_VERSION } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { engineRunArgs } from "../support/processes.ts";

const repository = join(import.meta.dirname, "..", "..");
/** Outside the repository: nothing of it can be found by walking up from here. */
const scratch = mkdtempSync(join(tmpdir(), "backend-package-"));
const project = join(scratch, "provider");
const backendDirectory = join(project, "cloud-backend");
const PACKAGE = "@acme/cloud-backend";
/** The Node running the tests (24) first on PATH, for npm and for the scripts' `node`. */
const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
delete env.NODE_OPTIONS;
delete env.VITEST;

/** The machine's own Node, older than the engine needs. */
const OLD_NODE = "/usr/bin/node";

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const children: ChildProcess[] = [];

/** Runs a command to its end; the result keeps everything it printed. */
function sh(command: string, args: readonly string[], cwd: string, more: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...env, ...more },
    encoding: "utf8",
    timeout: 300_000,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

/** Like {@link sh}, and fails the test with the output when the command fails. */
function ok(command: string, args: readonly string[], cwd: string): string {
  const result = sh(command, args, cwd);
  expect(result.status, `${command} ${args.join(" ")} in ${cwd}:\n${result.output}`).toBe(0);
  return result.output;
}

/** Starts a long-running command; its output is collected. */
function start(command: string, args: readonly string[], cwd: string) {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The engine's command as the backend package has it installed (its dev dependency). */
const openmcpEngine = join(backendDirectory, "node_modules", ".bin", "openmcp-engine");

/** `run` with the backend package, against the test's API server, keeping state in `<scratch>/<state>`. */
const runArgs = (state: string) =>
  engineRunArgs(
    {
      provider: "acme",
      environment: "test",
      kubeconfig: controlPlane.kubeconfigPath,
      stateDir: join(scratch, state),
    },
    `--backend=${PACKAGE}`,
    "--no-schedule",
  );

const readCluster = async (name: string) =>
  (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "acme", name })) as Cluster;

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith("acme"));
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "cloud", backend: "cloud-backend" }),
  });
});

afterAll(async () => {
  await Promise.all(children.map(stop));
  await controlPlane?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe("a backend in a package of its own", () => {
  let tarball: string;

  it("packs the engine, installs it into a project outside the repository and scaffolds a backend there", () => {
    ok("npm", ["pack", "--silent", "--pack-destination", scratch], repository);
    tarball = join(scratch, readdirSync(scratch).find((file) => file.endsWith(".tgz")) ?? "no tarball");
    const packed = ok("tar", ["tzf", tarball], scratch).split("\n");
    expect(packed).toEqual(
      expect.arrayContaining([
        "package/dist/index.d.ts",
        "package/dist/backend.js",
        "package/dist/conformance.js",
        "package/dist/testing.js",
        "package/dist/testing.d.ts",
        "package/dist/cli/main.js",
        "package/dist/cli/node-version.js",
        "package/templates/backend/src/index.ts",
        "package/crds/clusters.openmcp.cloud_clusters.yaml",
      ]),
    );
    expect(
      packed.filter(
        (file) =>
          file.startsWith("package/src/") ||
          file.startsWith("package/test/") ||
          file.startsWith("package/examples/namespace-clusters/"),
      ),
    ).toEqual([]);

    mkdirSync(project);
    ok("npm", ["init", "--yes", "--silent"], project);
    ok(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball],
      project,
    );
    const made = ok(
      join(project, "node_modules", ".bin", "openmcp-engine"),
      ["new-backend", PACKAGE, `--engine=file:${tarball}`],
      project,
    );
    expect(made).toContain(`Made backend package ${PACKAGE} in cloud-backend`);
    const manifest = JSON.parse(readFileSync(join(backendDirectory, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: PACKAGE,
      peerDependencies: { "openmcp-engine": "^0.1.0" },
      devDependencies: { "openmcp-engine": `file:${tarball}` },
    });
    const source = readFileSync(join(backendDirectory, "src", "index.ts"), "utf8");
    expect(source).toContain(
      `export const contractVersion: BackendContractVersion = "${BACKEND_CONTRACT_VERSION}"`,
    );
    expect(source).not.toMatch(/__[A-Z_]+__/);
    ok(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
      backendDirectory,
    );
  }, 600_000);

  it("says under the machine's Node 20, in one line and before anything loads, which Node the engine needs", () => {
    const bin = join(project, "node_modules", "openmcp-engine", "dist", "cli", "main.js");
    const old = spawnSync(OLD_NODE, [bin, "new-backend", "@acme/other"], {
      cwd: project,
      env,
      encoding: "utf8",
    });
    const version = spawnSync(OLD_NODE, ["--version"], { encoding: "utf8" }).stdout.trim().slice(1);
    expect(old.status).toBe(1);
    expect(old.stdout).toBe("");
    expect(old.stderr).toBe(
      `openmcp-engine needs Node.js 22.19 or later, but this is Node.js ${version} (${OLD_NODE}); run it with a newer node.\n`,
    );
    expect(
      JSON.parse(readFileSync(join(project, "node_modules", "openmcp-engine", "package.json"), "utf8"))
        .engines,
    ).toEqual({ node: ">=22.19" });
  });

  it("starts a throwaway API server with openmcp-engine/testing, from the machine's cache of binaries", () => {
    const script = `import { startTestApiServer } from "openmcp-engine/testing";
const api = await startTestApiServer();
console.log("serving", api.server, api.controllers);
await api.stop();`;
    const withoutAssets = { ...env };
    delete withoutAssets.KUBEBUILDER_ASSETS;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: backendDirectory,
      env: withoutAssets,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^serving https:\/\/127\.0\.0\.1:\d+ true$/m);
  }, 180_000);

  it("passes the conformance kit as generated, and type-checks against the engine's .d.ts", () => {
    const test = ok("npm", ["test"], backendDirectory);
    expect(test).toMatch(/# pass 1\b|ℹ pass 1\b/);
    ok("npm", ["run", "build"], backendDirectory);
  }, 300_000);

  it("fails the kit with the shrunk call sequence once create is no longer idempotent", () => {
    const file = join(backendDirectory, "src", "index.ts");
    const source = readFileSync(file, "utf8");
    const guard = "if (this.#find(target)) return; // idempotent";
    expect(source).toContain(guard);
    writeFileSync(file, source.replace(guard, "// (broken on purpose) idempotent"));
    try {
      // More sequences than the scaffold's default (sized for slow real infrastructure), so the fault is found.
      const result = sh("npm", ["test"], backendDirectory, { CONFORMANCE_RUNS: "40" });
      expect(result.status, result.output).not.toBe(0);
      expect(result.output).toContain("the backend breaks the contract — one cluster per Cluster object");
      expect(result.output).toMatch(/shortest call sequence found: create\(c\d, v#\d[^)]*\)/);
      expect(result.output).toMatch(/replay with \{ seed: -?\d+, path: "[\d:]+", replayPath: "[^"]+" \}/);
    } finally {
      writeFileSync(file, source);
    }
  }, 300_000);

  it("runs with openmcp-engine run --backend <package>: a Cluster becomes Ready on a real API server", async () => {
    const engine = start(openmcpEngine, runArgs("state"), backendDirectory);
    try {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "acme",
        body: aCluster({ name: "first", namespace: "acme", profile: "test.acme.cloud" }),
      });
      const ready = await eventually(
        async () => satisfying(await readCluster("first"), (c) => c.status?.phase === "Ready"),
        { what: `Cluster acme/first Ready\n${engine.output()}`, timeoutMs: 60_000 },
      );
      expect(ready.status?.phase).toBe("Ready");
    } finally {
      await stop(engine.child);
    }
  }, 120_000);

  it("refuses the package when it claims a contract version this engine does not implement", () => {
    const built = join(backendDirectory, "dist", "index.js");
    const original = readFileSync(built, "utf8");
    writeFileSync(built, original.replace(`"${BACKEND_CONTRACT_VERSION}"`, '"2.0.0"'));
    try {
      const result = sh(openmcpEngine, runArgs("state-refused"), backendDirectory);
      expect(result.status).toBe(1);
      expect(result.output).toContain(
        `backend "${PACKAGE}" cannot be loaded: it was built for backend contract 2.0.0, this engine implements backend contract ${BACKEND_CONTRACT_VERSION}`,
      );
    } finally {
      writeFileSync(built, original);
    }
  }, 120_000);

  it("embeds: a program starts the engine with run({ backend: createBackend }) from the package's main entry", async () => {
    writeFileSync(
      join(backendDirectory, "embed.mjs"),
      `import { run } from "openmcp-engine";
import { createBackend } from "${PACKAGE}";
const running = await run({
  providerName: "acme",
  environment: "test",
  kubeconfig: process.argv[2],
  backend: createBackend,
  stateDirectory: process.argv[3],
  schedule: false,
});
console.log("embedded engine started");
process.once("SIGTERM", () => running.stop().then(() => console.log("embedded engine stopped")));
`,
    );
    const program = start(
      process.execPath,
      ["embed.mjs", controlPlane.kubeconfigPath, join(scratch, "state-embedded")],
      backendDirectory,
    );
    try {
      await eventually(() => program.output().includes("embedded engine started"), {
        what: `the embedded engine started\n${program.output()}`,
        timeoutMs: 60_000,
      });
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "acme",
        body: aCluster({ name: "second", namespace: "acme", profile: "test.acme.cloud" }),
      });
      await eventually(
        async () => satisfying(await readCluster("second"), (c) => c.status?.phase === "Ready"),
        { what: `Cluster acme/second Ready\n${program.output()}`, timeoutMs: 60_000 },
      );
    } finally {
      await stop(program.child);
    }
    expect(program.output()).toContain("embedded engine stopped");
  }, 120_000);
});
