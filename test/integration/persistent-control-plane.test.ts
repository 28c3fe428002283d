/**
 * A persistent control plane on real processes: found again, stopped and restarted from its folder with its data
 * and CA, on new ports when the old ones are taken, finished after a start cut short.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { findKubeAssets } from "../../src/controlplane/kube-assets.ts";
import {
  inspectPersistentControlPlane,
  type PersistentControlPlane,
  startPersistentControlPlane,
  stopPersistentControlPlane,
} from "../../src/controlplane/persistent-control-plane.ts";
import { isProcessAlive, stopProcessGroups } from "../../src/util/process-groups.ts";
import { isAlive, waitUntilGone } from "../support/processes.ts";

const assets = findKubeAssets();
const parent = mkdtempSync(join(tmpdir(), "persistent-cp-"));
const directory = join(parent, "one");
mkdirSync(directory);

const pidsOf = (controlPlane: PersistentControlPlane) => [
  controlPlane.record.pids.etcd,
  controlPlane.record.pids.apiServer ?? -1,
];

function occupy(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** Stand-in orphans a test started: stopped at the end whether or not the test stopped them. */
const orphans: number[] = [];

afterAll(async () => {
  await stopProcessGroups(orphans.map((pid) => ({ pid, marker: `${directory}/` })));
  await stopPersistentControlPlane(directory, { remove: true });
  rmSync(parent, { recursive: true, force: true });
}, 60_000);

describe("a persistent control plane", { timeout: 120_000 }, () => {
  let first: PersistentControlPlane;

  it("starts in the given folder and records its processes, ports and version", async () => {
    first = await startPersistentControlPlane({ directory, assets });
    expect(first.adopted).toBe(false);
    expect(first.server).toBe(`https://127.0.0.1:${first.record.ports.apiServer}`);
    expect(first.record.kubernetesVersion).toMatch(/^v\d+\.\d+\.\d+/);
    expect(pidsOf(first).every(isAlive)).toBe(true);
    const record = JSON.parse(readFileSync(join(directory, "record.json"), "utf8"));
    expect(record).toEqual(first.record);
    expect(await inspectPersistentControlPlane(directory)).toMatchObject({
      exists: true,
      running: true,
      healthy: true,
      server: first.server,
    });
    await first.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "kept" } } });
  });

  it("is found running by a second start, which starts nothing", async () => {
    const again = await startPersistentControlPlane({ directory, assets });
    expect(again.adopted).toBe(true);
    expect(pidsOf(again)).toEqual(pidsOf(first));
    expect(again.server).toBe(first.server);
  });

  it("tells its processes from others by their command line", () => {
    expect(isProcessAlive(first.record.pids.etcd, `${directory}/`)).toBe(true);
    expect(isProcessAlive(first.record.pids.etcd, `${parent}/other/`)).toBe(false);
  });

  it("stops, keeping its folder, and restarts from its data with the same CA on new ports when the old ones are taken", async () => {
    await stopPersistentControlPlane(directory);
    expect(pidsOf(first).filter(isAlive)).toEqual([]);
    expect(await inspectPersistentControlPlane(directory)).toMatchObject({ exists: true, running: false });

    const taken = await occupy(first.record.ports.apiServer);
    try {
      const restarted = await startPersistentControlPlane({ directory, assets });
      expect(restarted.adopted).toBe(false);
      expect(restarted.server).not.toBe(first.server);
      expect(restarted.kubeConfig.getCurrentCluster()?.caData).toBe(
        first.kubeConfig.getCurrentCluster()?.caData,
      );
      const kept = await restarted.kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: "kept" });
      expect(kept.metadata?.name).toBe("kept");
      first = restarted;
    } finally {
      taken.close();
    }
  });

  it("finishes a start cut short before its controller-manager (kill -9 while kube-apiserver became healthy): the others kept", async () => {
    const { controllerManager, ...before } = first.record.pids;
    expect(controllerManager).toBeDefined();
    // What the cut-short start leaves: etcd and kube-apiserver running, recorded; no controller-manager.
    await stopProcessGroups([{ pid: controllerManager ?? -1, marker: `${directory}/` }]);
    writeFileSync(join(directory, "record.json"), JSON.stringify({ ...first.record, pids: before }));
    const again = await startPersistentControlPlane({ directory, assets });
    expect(again.adopted).toBe(false);
    expect(again.record.pids).toMatchObject(before); // kept: a restart would lose each start a crash cuts short
    expect(isAlive(again.record.pids.controllerManager ?? -1)).toBe(true);
    expect(JSON.parse(readFileSync(join(directory, "record.json"), "utf8"))).toEqual(again.record);
    const kept = await again.kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: "kept" });
    expect(kept.metadata?.name).toBe("kept");
    first = again;
  });

  it("stops the folder's processes no record names (a start killed between spawning and recording them), on either kind of start", async () => {
    // A stand-in orphan: a process of its own group whose command line names a file of the folder, as etcd's does.
    const orphan = () => {
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", join(directory, "etcd")], {
        detached: true,
        stdio: "ignore",
      });
      child.unref();
      orphans.push(child.pid ?? -1);
      return child.pid ?? -1;
    };
    // A whole start: everything recorded is stopped, then anything else of the folder.
    await stopPersistentControlPlane(directory);
    const beforeStart = orphan();
    expect(isAlive(beforeStart)).toBe(true);
    const started = await startPersistentControlPlane({ directory, assets });
    expect(isAlive(beforeStart)).toBe(false);
    expect(Object.values(started.record.pids)).not.toContain(beforeStart);
    // Finishing a start cut short before its controller-manager: the recorded ones kept, the unrecorded one stopped.
    const { controllerManager, ...kept } = started.record.pids;
    await stopProcessGroups([{ pid: controllerManager ?? -1, marker: `${directory}/` }]);
    writeFileSync(join(directory, "record.json"), JSON.stringify({ ...started.record, pids: kept }));
    const beforeFinish = orphan();
    const finished = await startPersistentControlPlane({ directory, assets });
    expect(finished.record.pids).toMatchObject(kept);
    expect(isAlive(beforeFinish)).toBe(false);
    expect(isAlive(finished.record.pids.controllerManager ?? -1)).toBe(true);
    first = finished;
  });

  it("is removed with its folder, and stopping what is gone succeeds", async () => {
    await stopPersistentControlPlane(directory, { remove: true });
    await waitUntilGone(pidsOf(first), directory, 1_000);
    expect(existsSync(parent) && !existsSync(directory)).toBe(true);
    expect(await inspectPersistentControlPlane(directory)).toEqual({
      exists: false,
      running: false,
      healthy: false,
    });
    await stopPersistentControlPlane(directory, { remove: true });
    await expect(startPersistentControlPlane({ directory, assets })).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});
