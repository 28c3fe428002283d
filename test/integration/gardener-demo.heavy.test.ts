/** `npm start -- --backend gardener`: the demo garden (gardener-apiserver, a SIMULATED gardenlet) and its Clusters Ready as Shoots. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect, it } from "vitest";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import { eventually } from "../support/eventually.ts";
import { ENGINE_MAIN, isAlive } from "../support/processes.ts";

it("brings the demo's Clusters to Ready as Shoots of Gardener's API server, grants the AccessRequest, and stops it all on SIGINT", async () => {
  findGardenerAssets(); // builds gardener-apiserver once per machine (hack/gardener/build.sh)
  const folder = mkdtempSync(join(tmpdir(), "gardener-demo-"));
  const kubeconfig = join(folder, "kubeconfig");
  const child = spawn(
    process.execPath,
    [
      ENGINE_MAIN,
      "up",
      "--backend=gardener",
      "--kubeconfig-out",
      kubeconfig,
      "--log",
      join(folder, "engine.log"),
      "--live-view-address=0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`up exited early:\n${output}`);
        return output.includes("AccessRequest demo/viewer is Granted");
      },
      {
        what: "the demo's Clusters Ready and its AccessRequest Granted",
        timeoutMs: 150_000,
        intervalMs: 500,
      },
    );
    expect(output).toContain("All 2 Clusters are Ready.");
    expect(output).toMatch(/garden: gardener-apiserver v1\.\d+\.\d+ \(pid \d+\)/);
    // The admin kubeconfig the demo wrote is the one Gardener's adminkubeconfig issued: it works on the Shoot.
    const admin = new KubeConfig();
    admin.loadFromFile(join(folder, "clusters", "demo.workload.kubeconfig"));
    // Gardener names its contexts <project namespace>--<shoot>-<advertised address>.
    expect(admin.getCurrentContext()).toMatch(/^garden-demo--o[a-z2-7]{8}-external$/);
    const namespaces = await admin.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("team-a"); // made for the AccessRequest
    const gardenerPid = Number(/gardener-apiserver v[\d.]+ \(pid (\d+)\)/.exec(output)?.[1]);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    await eventually(() => !isAlive(gardenerPid), { what: "gardener-apiserver stopped with the demo" });
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(folder, { recursive: true, force: true });
  }
}, 240_000);
