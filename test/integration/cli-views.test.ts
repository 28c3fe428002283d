/** `run --inspect --live-view-address …` as a user starts it: both views serve a Cluster's lifecycle; bad flags are usage errors. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import WebSocket from "ws";
import { type ClusterHarness, isReady, startClusterHarness } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";
import { engineRunArgs, runEngineCli, startEngineCli } from "../support/processes.ts";

let harness: ClusterHarness;

beforeAll(async () => {
  harness = await startClusterHarness();
});

afterAll(async () => {
  await harness?.stop();
});

/** The `url` or `page` field of the first JSON log line with this message; throws while there is none. */
function logged(output: string, message: string, field: string): string {
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    if (record.msg === message && typeof record[field] === "string") return record[field] as string;
  }
  throw new Error(`no log line "${message}" with a ${field} yet`);
}

describe("run with the development views", () => {
  it("streams to the inspector relay and serves the live view, both on loopback, and stops cleanly", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "views-"));
    onTestFinished(() => rmSync(stateDir, { recursive: true, force: true }));
    const { child, output } = startEngineCli(
      engineRunArgs(
        { provider: harness.provider, kubeconfig: harness.controlPlane.kubeconfigPath, stateDir },
        // The harness's profile is made by hand, with no ProviderConfig to choose a backend: name it.
        "--backend=simulated",
        "--backend-option=delay=300ms",
        "--inspect-address=127.0.0.1:0",
        "--live-view-address=127.0.0.1:0",
      ),
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const liveView = await eventually(() => logged(output(), "live view listening", "url"), {
        what: "the live view",
      });
      const inspectorPage = await eventually(
        () => logged(output(), "Stately inspector relay listening", "page"),
        {
          what: "the inspector relay",
        },
      );
      expect(liveView).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(inspectorPage).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

      const socket = new WebSocket(inspectorPage.replace("http://", "ws://"));
      const names: string[] = [];
      socket.on("message", (data) => {
        const message = JSON.parse(data.toString()) as { type: string; name?: string };
        if (message.type === "@xstate.actor" && message.name) names.push(message.name);
      });
      await new Promise((resolve) => socket.once("open", resolve));

      await harness.createCluster("viewed");
      await harness.waitFor("viewed", isReady);
      await eventually(() => names.includes("Cluster/clusters/viewed"), { what: "the actor" });
      socket.close();

      const shown = await (await fetch(new URL("resources", liveView))).json();
      expect(shown).toMatchObject({
        resources: [
          { kind: "Cluster", namespace: "clusters", name: "viewed", state: "ready", phase: "Ready" },
        ],
      });
      const page = await fetch(liveView);
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await page.text()).toContain('<template data-machine="cluster"><svg');
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });

  it("refuses malformed view flags with a usage error", () => {
    const run = (...args: string[]) => runEngineCli("run", "--provider-name=x", ...args);
    const bad = run("--inspect-address=somewhere");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--inspect-address: bind address "somewhere" must look like');
    const contradictory = run("--no-inspect", "--inspect-address=127.0.0.1:0");
    expect(contradictory.status).toBe(2);
    expect(contradictory.stderr).toContain("--inspect-address needs the inspector on");
    expect(run("--help").stdout).toContain("--live-view-address <addr>");
  });
});
