/** `openmcp-engine up` as a user runs it: a usable kubeconfig, CRDs served, a clean stop on Ctrl-C, clear flag errors. */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiextensionsV1Api, KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { waitUntilGone } from "../support/processes.ts";

const main = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");

describe("openmcp-engine up", () => {
  it("serves the CRDs, brings the demo Clusters to Ready and stops everything on SIGINT", async () => {
    const folder = mkdtempSync(join(tmpdir(), "up-test-"));
    const kubeconfig = join(folder, "kubeconfig");
    const child = spawn(
      process.execPath,
      [
        main,
        "up",
        "--kubeconfig-out",
        kubeconfig,
        "--log",
        join(folder, "engine.log"),
        "--backend-option=delay=1s",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (output.includes("All 3 Clusters are Ready")) {
            clearInterval(timer);
            resolve();
          }
          if (child.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`up exited early:\n${output}`));
          }
        }, 100);
      });
      expect(output).toContain(`kubectl --kubeconfig ${kubeconfig} get crds`);
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(kubeconfig);
      const crds = await kubeConfig.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
      expect(crds.items.map((crd) => crd.metadata?.name)).toContain("clusters.clusters.openmcp.cloud");
      expect(output).toMatch(/demo\/legacy\s+ready\s+Ready\s+1\.32\.10/);

      const directory = /logs:\s+(\S+)\/\{etcd/.exec(output)?.[1] ?? "";
      expect(existsSync(directory)).toBe(true);
      const pids = [...output.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
      expect(pids).toHaveLength(2);
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(output).toContain("SIGINT: stopping the control plane");
      expect(await waitUntilGone(pids, directory)).toEqual({ alive: [], directoryExists: false });
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("rejects an unknown flag with exit code 2 and the usage", () => {
    const result = spawnSync(process.execPath, [main, "up", "--no-such-flag"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Unknown option '--no-such-flag'");
    expect(result.stderr).toContain("Usage: openmcp-engine up");
  });

  it("rejects an unknown command with exit code 2", () => {
    const result = spawnSync(process.execPath, [main, "fly"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown command "fly"');
  });
});
