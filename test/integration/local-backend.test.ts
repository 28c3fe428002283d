/**
 * The `local` backend on real etcd + kube-apiserver processes: lifecycle, idempotence, adoption after a restart,
 * recovery after kill -9 (of the cluster's processes, or of the engine midway through a start), failures.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { certificatePaths } from "../../src/controlplane/control-plane-files.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import {
  inspectPersistentControlPlane,
  type PersistentControlPlaneRecord,
} from "../../src/controlplane/persistent-control-plane.ts";
import { createBackend } from "../../src/providers/local.ts";
import { loadBackendFactory } from "../../src/providers/registry.ts";
import { aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { localBackends } from "../support/local-backend-state.ts";
import { observationWhere } from "../support/observation-where.ts";
import { isAlive, killHard, processesMentioning, waitUntilGone } from "../support/processes.ts";
import { serviceAccountToken } from "../support/service-account-token.ts";

const assets = findKubeAssets();
const binaryVersion = kubeAssetVersions(assets).kubernetes.replace(/^v/, "");

const target = (uid: string, name = "one"): ClusterTarget => ({
  uid,
  namespace: "local-test",
  name,
  tenancy: "Exclusive",
  profile: "local.test.local",
  providerConfig: "local",
});

const config = (spec: Partial<ProviderConfig["spec"]> = {}): ProviderConfig =>
  aProviderConfig({ name: "local", backend: "local", ...spec });

/** Backends made here, and their state folders, so that afterAll stops every process whatever failed. */
const locals = localBackends("local-backend-");
const newStateDirectory = () => locals.folder();
const open = (stateDirectory: string, options: Record<string, string> = {}) =>
  locals.open(stateDirectory, options);

/** The backend's observation of `cluster` once `wanted` holds. */
const until = (backend: ClusterBackend, cluster: ClusterTarget, wanted: (o: ClusterObservation) => boolean) =>
  observationWhere(backend, cluster, wanted, { timeoutMs: 60_000, intervalMs: 200 });

const isReady = (o: ClusterObservation) => o.exists && o.phase === "ready";

async function recordOf(stateDirectory: string, uid: string): Promise<PersistentControlPlaneRecord> {
  const status = await inspectPersistentControlPlane(join(stateDirectory, "clusters", uid));
  if (!status.record) throw new Error(`no record for ${uid}`);
  return status.record;
}

async function coreApi(backend: ClusterBackend, cluster: ClusterTarget): Promise<CoreV1Api> {
  const access = await backend.adminAccess(cluster);
  if (!access) throw new Error("no admin access");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(access.kubeconfig);
  return kubeConfig.makeApiClient(CoreV1Api);
}

afterAll(async () => {
  await locals.close();
}, 120_000);

describe("the local backend", { timeout: 120_000 }, () => {
  const state = newStateDirectory();
  const cluster = target("4a1e6f0e-0000-4000-8000-00000000a001");
  let backend: ClusterBackend;
  let endpoint = "";
  let pids: number[] = [];

  beforeAll(async () => {
    backend = await open(state);
  });

  it("is a built-in named local that offers the binaries' version and the workerless trait", async () => {
    expect(await loadBackendFactory("local")).toBe(createBackend);
    expect(backend.name).toBe("local");
    expect(backend.capabilities).toEqual({ adminAccess: true, oidc: true });
    expect(backend.supportedVersions(config())).toEqual([{ version: binaryVersion }]);
    expect(
      backend.supportedVersions(
        config({ supportedVersions: [{ version: "1.30.1" }, { version: binaryVersion, deprecated: true }] }),
      ),
    ).toEqual([{ version: binaryVersion, deprecated: true }]);
    expect(backend.supportedVersions(config({ supportedVersions: [{ version: "1.30.1" }] }))).toEqual([]);
    expect(backend.traits(config({ traits: ["fast", "workerless"] }))).toEqual(["workerless", "fast"]);
  });

  it("creates a control plane that becomes ready, with admin access that works", async () => {
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    expect(await backend.adminAccess(cluster)).toBeUndefined();
    await backend.create(cluster, binaryVersion);
    const first = await backend.observe(cluster);
    expect(first).toMatchObject({ exists: true, version: binaryVersion });
    expect(first.exists && first.phase).toMatch(/^(provisioning|ready)$/);

    const ready = await until(backend, cluster, isReady);
    expect(ready).toMatchObject({ exists: true, phase: "ready", version: binaryVersion });
    endpoint = (ready.exists && ready.endpoint) || "";
    expect(endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(JSON.stringify(ready)).not.toMatch(/BEGIN|PRIVATE|client-key/);

    const access = await backend.adminAccess(cluster);
    expect(access?.kubeconfig).toContain(`server: ${endpoint}`);
    const core = await coreApi(backend, cluster);
    const namespaces = (await core.listNamespace()).items.map((ns) => ns.metadata?.name);
    expect(namespaces).toContain("default");
    await core.createNamespace({ body: { metadata: { name: "survivor" } } });

    const record = await recordOf(state, cluster.uid);
    pids = [record.pids.etcd, record.pids.apiServer ?? -1];
    expect(pids.every(isAlive)).toBe(true);
  });

  it("does nothing on a second create: same endpoint, same processes", async () => {
    await backend.create(cluster, binaryVersion);
    await backend.create(cluster, binaryVersion);
    const observation = await backend.observe(cluster);
    expect(observation).toMatchObject({ phase: "ready", endpoint });
    const record = await recordOf(state, cluster.uid);
    expect([record.pids.etcd, record.pids.apiServer]).toEqual(pids);
  });

  it("accepts an update to its version and refuses another one with a clear error", async () => {
    await backend.update(cluster, binaryVersion);
    await expect(backend.update(cluster, "1.30.1")).rejects.toThrow(
      new RegExp(
        `cannot update cluster local-test/one to Kubernetes 1\\.30\\.1: it runs only ${binaryVersion}`,
      ),
    );
    expect(await backend.observe(cluster)).toMatchObject({ phase: "ready", endpoint });
  });

  it("leaves the cluster running on close, and a new instance adopts it (same processes, same endpoint)", async () => {
    await backend.close?.();
    expect(pids.every(isAlive)).toBe(true);
    backend = await open(state);
    expect(await backend.observe(cluster)).toMatchObject({ phase: "ready", endpoint });
    await backend.create(cluster, binaryVersion); // a create after the restart changes nothing
    const record = await recordOf(state, cluster.uid);
    expect([record.pids.etcd, record.pids.apiServer]).toEqual(pids);
  });

  it("restarts a cluster whose processes were killed (kill -9) from its data, while it runs", async () => {
    await killHard(pids);
    const meanwhile = await backend.observe(cluster);
    expect(meanwhile).toMatchObject({ exists: true, phase: "provisioning", version: binaryVersion });

    expect(await until(backend, cluster, isReady)).toMatchObject({ phase: "ready", endpoint });
    const record = await recordOf(state, cluster.uid);
    const restarted = [record.pids.etcd, record.pids.apiServer ?? -1];
    expect(restarted).not.toEqual(pids);
    pids = restarted;
    const core = await coreApi(backend, cluster);
    expect((await core.readNamespace({ name: "survivor" })).metadata?.name).toBe("survivor");
  });

  it("restarts, when a new instance starts, a cluster whose processes died while no controller ran", async () => {
    await backend.close?.();
    await killHard(pids);
    backend = await open(state);
    expect(await backend.observe(cluster)).toMatchObject({ exists: true, phase: "provisioning" });
    expect(await until(backend, cluster, isReady)).toMatchObject({ phase: "ready", endpoint });
    const record = await recordOf(state, cluster.uid);
    expect([record.pids.etcd, record.pids.apiServer]).not.toEqual(pids);
    pids = [record.pids.etcd, record.pids.apiServer ?? -1];
    const core = await coreApi(backend, cluster);
    expect((await core.readNamespace({ name: "survivor" })).metadata?.name).toBe("survivor");
  });

  it("finishes, when a new instance starts, a cluster whose start was cut short before its controller-manager", async () => {
    await backend.close?.();
    const { controllerManager, ...running } = (await recordOf(state, cluster.uid)).pids;
    expect(controllerManager).toBeDefined();
    // What an engine killed while kube-apiserver became healthy leaves: etcd and kube-apiserver, recorded, alone.
    await killHard([controllerManager ?? -1]);
    const folder = join(state, "clusters", cluster.uid);
    const record = await recordOf(state, cluster.uid);
    writeFileSync(join(folder, "record.json"), JSON.stringify({ ...record, pids: running }));
    backend = await open(state);
    const whole = await eventually(
      async () => {
        const now = await recordOf(state, cluster.uid);
        expect(isAlive(now.pids.controllerManager ?? -1)).toBe(true);
        return now;
      },
      { what: "its controller-manager running", timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(whole.pids).toMatchObject(running); // etcd and kube-apiserver kept, not restarted nor doubled
    expect(await backend.observe(cluster)).toMatchObject({ phase: "ready", endpoint });
    const core = await coreApi(backend, cluster);
    expect((await core.readNamespace({ name: "survivor" })).metadata?.name).toBe("survivor");
  });

  it("with stopOnClose, stops the processes on close and keeps the data", async () => {
    await backend.close?.();
    backend = await open(state, { stopOnClose: "true" });
    expect(await backend.observe(cluster)).toMatchObject({ phase: "ready", endpoint });
    await backend.close?.();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(join(state, "clusters", cluster.uid, "etcd"))).toBe(true);
    backend = await open(state);
    expect(await until(backend, cluster, isReady)).toMatchObject({ phase: "ready" });
    const record = await recordOf(state, cluster.uid);
    pids = [record.pids.etcd, record.pids.apiServer ?? -1];
  });

  it("deletes: no process and no folder left; deleting again, or what never existed, succeeds", async () => {
    await backend.delete(cluster);
    const directory = join(state, "clusters", cluster.uid);
    await waitUntilGone(pids, directory, 1_000);
    expect(readdirSync(join(state, "clusters"))).toEqual([]);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    expect(await backend.adminAccess(cluster)).toBeUndefined();
    await backend.delete(cluster);
    await backend.delete(target("4a1e6f0e-0000-4000-8000-00000000a0ff", "never"));
    await backend.close?.();
  });
});

/** `ps` lines (pid and command) of the processes whose command line names `folder`: a cluster's etcd, kube-apiserver, … */
const psLinesOf = (folder: string): string[] =>
  execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(`${folder}/`));

describe("a hibernated local cluster (contract 1.6)", { timeout: 180_000 }, () => {
  const state = newStateDirectory();
  const cluster = target("4a1e6f0e-0000-4000-8000-00000000b001", "sleeper");
  const folder = join(state, "clusters", cluster.uid);
  let backend: ClusterBackend;
  let endpoint = "";
  let kubeconfigBefore = "";
  let tokenBefore = "";

  beforeAll(async () => {
    backend = await open(state);
    await backend.create(cluster, binaryVersion);
    const ready = await until(backend, cluster, isReady);
    endpoint = (ready.exists && ready.endpoint) || "";
    kubeconfigBefore = (await backend.adminAccess(cluster))?.kubeconfig ?? "";
    const core = await coreApi(backend, cluster);
    await core.createNamespace({ body: { metadata: { name: "dreamer" } } });
    tokenBefore = await serviceAccountToken(core, "default", "sleepy");
    expect(psLinesOf(folder).length).toBeGreaterThanOrEqual(2);
  });

  it("stops every process of the cluster and reports it hibernated, keeping its folder", async () => {
    const before = psLinesOf(folder);
    await backend.hibernate?.(cluster);
    await backend.hibernate?.(cluster); // idempotent
    expect(await until(backend, cluster, (o) => o.exists && o.phase === "hibernated")).toMatchObject({
      exists: true,
      phase: "hibernated",
      version: binaryVersion,
    });
    console.log(`local hibernate: ${before.length} processes before, ${psLinesOf(folder).length} after`);
    expect(psLinesOf(folder)).toEqual([]);
    expect(processesMentioning(`${folder}/`)).toEqual([]);
    // Its data, record (ports), certificates and keys (the CA's, the service-account signing key) stay.
    const kept = [...["etcd", "record.json", "hibernated"].map((name) => join(folder, name))];
    for (const path of [...kept, ...Object.values(certificatePaths(folder))])
      expect(existsSync(path), path).toBe(true);
    expect(await backend.adminAccess(cluster)).toBeUndefined();
  });

  it("stays asleep: no supervisor starts it, nor a create, nor a new instance (an engine restart)", async () => {
    await backend.create(cluster, binaryVersion);
    await new Promise((done) => setTimeout(done, 4_500)); // two supervision rounds (every 2 s)
    await backend.close?.();
    backend = await open(state);
    await new Promise((done) => setTimeout(done, 4_500));
    expect(await backend.observe(cluster)).toMatchObject({ phase: "hibernated" });
    expect(psLinesOf(folder)).toEqual([]);
  });

  it("wakes on the same data, endpoint and CA: a kubeconfig and a token given before the sleep work", async () => {
    const start = Date.now();
    await backend.wake?.(cluster);
    await backend.wake?.(cluster); // idempotent
    expect(await backend.observe(cluster)).toMatchObject({ phase: "waking" });
    const ready = await until(backend, cluster, isReady);
    console.log(`local wake: ready after ${Date.now() - start} ms, ${psLinesOf(folder).length} processes`);
    expect(ready).toMatchObject({ phase: "ready", endpoint });
    await eventually(async () => expect(existsSync(join(folder, "waking"))).toBe(false), {
      what: "the waking mark gone",
      timeoutMs: 10_000,
      intervalMs: 100,
    });

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigBefore);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const namespaces = (await core.listNamespace()).items.map((ns) => ns.metadata?.name);
    expect(namespaces).toContain("dreamer");

    const byToken = new KubeConfig();
    byToken.loadFromOptions({
      clusters: [{ name: "c", server: endpoint, caData: kubeConfig.getCurrentCluster()?.caData }],
      users: [{ name: "sleepy", token: tokenBefore }],
      contexts: [{ name: "c", cluster: "c", user: "sleepy" }],
      currentContext: "c",
    });
    const review = await byToken.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe("system:serviceaccount:default:sleepy");
  });

  it("is deleted from hibernated: no process and no folder left", async () => {
    await backend.hibernate?.(cluster);
    await until(backend, cluster, (o) => o.exists && o.phase === "hibernated");
    await backend.delete(cluster);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    expect(existsSync(folder)).toBe(false);
    expect(psLinesOf(folder)).toEqual([]);
  });
});

describe("a local cluster that cannot start", { timeout: 120_000 }, () => {
  it("is reported failed with the reason and where the logs are, never hangs, and can be deleted", async () => {
    // Real etcd, and a kube-apiserver that reports the version and then fails the way a bad flag would.
    const fakeAssets = newStateDirectory(); // removed with the state folders
    symlinkSync(assets.etcd, join(fakeAssets, "etcd"));
    const apiServer = join(fakeAssets, "kube-apiserver");
    writeFileSync(
      apiServer,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Kubernetes v${binaryVersion}"; exit 0; fi\necho "Error: unknown flag: --broken" >&2\nexit 1\n`,
    );
    chmodSync(apiServer, 0o755);
    const state = newStateDirectory();
    const backend = await open(state, { assets: fakeAssets, startTimeout: "30s" });
    const cluster = target("4a1e6f0e-0000-4000-8000-00000000b001", "broken");

    await backend.create(cluster, binaryVersion);
    const failed = await until(backend, cluster, (o) => o.exists && o.phase === "failed");
    const directory = join(state, "clusters", cluster.uid);
    expect(failed).toMatchObject({ exists: true, phase: "failed", version: binaryVersion });
    const message = (failed.exists && failed.message) || "";
    expect(message).toContain("kube-apiserver exited with 1");
    expect(message).toContain(join(directory, "kube-apiserver.log"));
    expect(message).not.toMatch(/BEGIN|PRIVATE/);
    const record = await recordOf(state, cluster.uid);
    expect(isAlive(record.pids.etcd)).toBe(false); // the failed start stopped what it had started

    await backend.delete(cluster);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    expect(existsSync(directory)).toBe(false);
    await backend.close?.();
  });

  it("refuses to create at a version other than the binaries'", async () => {
    const backend = await open(newStateDirectory());
    const cluster = target("4a1e6f0e-0000-4000-8000-00000000b002", "old");
    await expect(backend.create(cluster, "1.30.1")).rejects.toThrow(/cannot create cluster local-test\/old/);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    await backend.close?.();
  });

  it("rejects backend options it cannot use", async () => {
    await expect(open(newStateDirectory(), { stopOnClose: "maybe" })).rejects.toThrow(/stopOnClose "maybe"/);
    await expect(open(newStateDirectory(), { startTimeout: "soon" })).rejects.toThrow(/startTimeout "soon"/);
  });
});
