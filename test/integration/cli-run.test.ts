/** `openmcp-engine run` as an operator runs it: flags, V8 flags, the kubeconfig it finds (kill -9 mid-way: kill-nine.test.ts). */

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { eventually } from "../support/eventually.ts";
import { ENGINE_MAIN, engineRunArgs, startEngineCli } from "../support/processes.ts";

const main = ENGINE_MAIN;
let controlPlane: ControlPlane;
/** Every `--state-dir` of this file: a temporary folder, never the repository's `.state/`. */
const stateRoot = mkdtempSync(join(tmpdir(), "cli-run-"));

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
});

afterAll(async () => {
  await controlPlane?.stop();
  rmSync(stateRoot, { recursive: true, force: true });
});

/** `run` for provider `p` on the test's API server, keeping state in `stateDir`. */
const runArgs = (stateDir: string) =>
  engineRunArgs({ provider: "p", kubeconfig: controlPlane.kubeconfigPath, stateDir });

describe("openmcp-engine run", () => {
  it("refuses to start without --provider-name, with exit code 2 and the usage", () => {
    const result = spawnSync(process.execPath, [main, "run"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--provider-name is required");
    expect(result.stderr).toContain("Usage: openmcp-engine run");
  });

  it("names the problem of a bad flag value", () => {
    const cases: Array<[string[], string]> = [
      [["--provider-name=Bad_Name"], '--provider-name "Bad_Name" must be a DNS label'],
      [["--provider-name=p", "--concurrency=0"], '--concurrency "0" must be a whole number from 1 to 64'],
      [
        ["--provider-name=p", "--backend-option=nonsense"],
        '--backend-option "nonsense" must look like key=value',
      ],
      [
        ["--provider-name=p", "--log-level=loud"],
        '--log-level "loud" must be one of debug, info, warn, error',
      ],
    ];
    for (const [args, message] of cases) {
      const result = spawnSync(process.execPath, [main, "run", ...args], { encoding: "utf8" });
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it("names the problem of a backend that cannot be loaded or started", () => {
    // run makes <state-dir>/<backend> before it loads the backend; the default would be ./.state/engine.
    const stateDir = mkdtempSync(join(stateRoot, "bad-backend-"));
    const cases: Array<[string[], string]> = [
      [["--backend=cloudy"], 'cannot load backend "cloudy"'],
      [["--backend=./no/such/module.ts"], 'cannot load backend "./no/such/module.ts"'],
      [
        ["--backend=./src/api/constants.ts"],
        'backend module "./src/api/constants.ts" exports no createBackend function',
      ],
      [
        ["--backend=simulated", "--backend-option=delay=soon"],
        'simulated backend: delay "soon" is not a duration',
      ],
    ];
    for (const [args, message] of cases) {
      const result = spawnSync(process.execPath, [main, ...runArgs(stateDir), ...args], {
        encoding: "utf8",
        cwd: join(import.meta.dirname, "..", ".."),
      });
      expect(result.status, args.join(" ")).toBe(1);
      expect(result.stderr).toContain(message);
    }
  });

  it("refuses an invalid scheduler configuration at start, naming every problem, and says when scheduling is off", () => {
    const stateDir = mkdtempSync(join(stateRoot, "bad-scheduler-"));
    const file = join(stateDir, "scheduler.yaml");
    writeFileSync(
      file,
      "scheduler:\n  strategy: Fastest\n  purposeMappings:\n    mcp: {template: {spec: {tenancy: Exclusive}}}\n",
    );
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [main, ...runArgs(stateDir), ...args], {
        encoding: "utf8",
        timeout: 30_000,
      });
    const bad = run(`--scheduler-config=${file}`);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      'scheduler.strategy: "Fastest" is not one of Balanced, BalancedIgnoreEmpty, Random, Simple',
    );
    expect(bad.stderr).toContain("scheduler.purposeMappings.mcp.template.spec.profile: required");
    const both = run(`--scheduler-config=${file}`, "--scheduler-config-map=a/b");
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("give --scheduler-config or --scheduler-config-map, not both");
  });

  it("refuses --capi where Cluster API is not installed, and by default says the Cluster API side is off and why", async () => {
    const stateDir = mkdtempSync(join(stateRoot, "capi-"));
    const args = runArgs(stateDir);
    const forced = spawnSync(process.execPath, [main, ...args, "--capi"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(forced.status).toBe(1);
    expect(forced.stderr).toContain(
      "--capi: Cluster API is not usable here: CRD clusters.cluster.x-k8s.io is not installed",
    );
    const auto = startEngineCli(args);
    try {
      await eventually(() => auto.output().includes('"msg":"engine started"'), {
        what: "the engine started",
      });
      expect(auto.output()).toContain(
        "Cluster API side off: CRD clusters.cluster.x-k8s.io is not installed; install Cluster API and restart (or pass --capi) to serve EngineClusters",
      );
      expect(auto.output()).not.toContain('"EngineCluster"');
    } finally {
      auto.child.kill("SIGTERM");
      await new Promise((resolve) => auto.child.once("exit", resolve));
    }
  });

  it("runs with the engine's V8 flags however node was started, in the same process, a user's own setting first", async () => {
    const args = runArgs(mkdtempSync(join(stateRoot, "v8-")));
    /** The node command line of the running engine (the pid `spawn` returned: replaced, not a child). */
    const started = async (env: Record<string, string>) => {
      const engine = startEngineCli(args, env);
      try {
        await eventually(() => engine.output().includes('"msg":"engine started"'), {
          what: `the engine started\n${engine.output()}`,
        });
        const argv = readFileSync(`/proc/${engine.child.pid}/cmdline`, "utf8").split("\0");
        return { argv, output: engine.output() };
      } finally {
        engine.child.kill("SIGTERM");
        await new Promise((resolve) => engine.child.once("exit", resolve));
      }
    };
    const plain = await started({ NODE_OPTIONS: "" });
    expect(plain.argv).toEqual(
      expect.arrayContaining(["--max-semi-space-size=2", "--max-old-space-size=256", "--optimize-for-size"]),
    );
    // The lean client-node hooks are preloaded, before anything loads the Kubernetes client.
    expect(plain.argv.filter((arg) => arg.endsWith("/lean-client-node-preload.ts"))).toHaveLength(1);
    expect(plain.output).not.toContain("runs without the engine's V8 flags");
    const own = await started({ NODE_OPTIONS: "--max-old-space-size=300" });
    expect(own.argv).toContain("--max-semi-space-size=2");
    expect(own.argv.filter((arg) => arg.startsWith("--max-old-space-size"))).toEqual([]);
  });

  it("says where it looked when no kubeconfig can be found", () => {
    const result = spawnSync(
      process.execPath,
      [main, "run", "--provider-name=p", "--kubeconfig=/nonexistent"],
      {
        encoding: "utf8",
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("--kubeconfig /nonexistent does not exist");
  });
});
