/**
 * ClusterSnapshots of real local clusters (etcd, kube-apiserver and controller-manager of this machine) driven by the
 * engine on a real management API server: a Cluster with many ConfigMaps is snapshotted, changed (every ConfigMap
 * deleted, another made), and rolled back by the restore annotation: every ConfigMap comes back as it was (compared
 * by content), the later one is gone, and a service-account token and the admin kubeconfig issued before the snapshot
 * work against the restored control plane at the same endpoint. Bad input: a snapshot of a missing Cluster fails
 * with ClusterNotFound; a restore from a snapshot whose etcd data was altered is refused with ChecksumMismatch and
 * the Cluster keeps its data; a storage path leaving the snapshot folder is refused by CEL. Snapshot and restore
 * times are printed (OPENMCP_SNAPSHOT_OBJECTS sets the number of ConfigMaps; default 1,000). And the conformance kit's
 * snapshot part, on the local backend itself, and a restore a crash cut short finished by a restarted backend.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AuthenticationV1Api,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTER_SNAPSHOT_RESOURCE } from "../../src/api/constants/cluster-snapshot.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { SnapshotManifest } from "../../src/api/control-plane-snapshot.ts";
import {
  inspectPersistentControlPlane,
  stopPersistentControlPlane,
} from "../../src/controlplane/persistent-control-plane.ts";
import { checkSnapshotConformance } from "../../src/providers/conformance-snapshots.ts";
import { createBackend } from "../../src/providers/local.ts";
import { bearerKubeConfig } from "../support/access-proofs.ts";
import { aTargetFor } from "../support/builders.ts";
import * as snapshots from "../support/cluster-snapshots.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually } from "../support/eventually.ts";
import { LOCAL_PROFILE, localAdmin, localBackends, startLocalWorld } from "../support/local-backend-state.ts";
import { APP, changeAfterSnapshot, contents, writeConfigMaps } from "../support/snapshot-objects.ts";
import { isReady, type World } from "../support/world.ts";

const OBJECTS = Number(process.env.OPENMCP_SNAPSHOT_OBJECTS ?? 1_000);
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

const locals = localBackends("local-snapshots-");
/** The engine's snapshot folder, removed with the backends' state folders. */
const snapshotRoot = locals.folder();
const state = locals.folder();
let world: World;
let cluster: Cluster;
let admin: KubeConfig;
let token = "";

/** The backend's target of the world's Cluster `object`. */
const targetOf = (object: Cluster): ClusterTarget =>
  aTargetFor(object, { profile: LOCAL_PROFILE, providerConfig: "local" });

/** The admin kubeconfig's API server serves again (after a restart): lists namespaces. */
const serves = (kubeConfig: KubeConfig) =>
  eventually(() => kubeConfig.makeApiClient(CoreV1Api).listNamespace(), {
    what: "the restored API server to serve",
    timeoutMs: 120_000,
    intervalMs: 200,
  });

beforeAll(async () => {
  world = await startLocalWorld(locals, {
    state,
    engine: { kindSettings: { ClusterSnapshot: { folder: snapshotRoot } } },
  });
  await world.createCluster("source", { profile: LOCAL_PROFILE });
  cluster = (await world.waitFor("source", isReady, 180_000)) as Cluster;
  admin = await localAdmin(world, cluster);
}, 240_000);

afterAll(() => locals.close(world), 120_000);

describe(`snapshots of a real local cluster with ${OBJECTS} ConfigMaps`, { timeout: 900_000 }, () => {
  let manifest: SnapshotManifest | undefined;
  let written = new Map<string, Record<string, string>>();

  it("takes a checksummed snapshot of the Cluster (etcd's, with the CA and service-account keys)", async () => {
    const writing = Date.now();
    await writeConfigMaps(admin, OBJECTS);
    const core = admin.makeApiClient(CoreV1Api);
    console.log(`local snapshot: wrote ${OBJECTS} ConfigMaps in ${Date.now() - writing} ms`);
    written = await contents(admin);
    expect(written.size).toBe(OBJECTS);
    // A token granted before the snapshot (bound to a ServiceAccount the snapshot holds).
    await core.createNamespacedServiceAccount({ namespace: APP, body: { metadata: { name: "reader" } } });
    const granted = await core.createNamespacedServiceAccountToken({
      namespace: APP,
      name: "reader",
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    token = granted.status?.token ?? "";
    expect(token).not.toBe("");

    const started = Date.now();
    await snapshots.create(world, "before", "source");
    const taken = await snapshots.where(world, "before", (s) => s.status?.phase === "Complete");
    console.log(
      `local snapshot: ${OBJECTS} ConfigMaps snapshotted in ${Date.now() - started} ms (object created → Complete), ${taken.status?.size} bytes`,
    );
    expect(conditionOf(taken, "Ready")).toMatchObject({ status: "True", reason: "Taken" });
    expect(taken.status).toMatchObject({
      cluster: { uid: cluster.metadata.uid, endpoint: cluster.status?.endpoints?.[0]?.url },
      checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const location = taken.status?.location;
    manifest = JSON.parse(
      readFileSync(join(location?.folder ?? "", location?.name ?? "", "manifest.json"), "utf8"),
    );
    expect(manifest?.checksum).toBe(taken.status?.checksum);
    expect(manifest?.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(["etcd.db", "ca.crt", "sa.key", "sa.pub", "apiserver.crt", "admin.crt"]),
    );
    // No unfinished write left beside it.
    expect(existsSync(join(location?.folder ?? "", `.${location?.name}.partial-`))).toBe(false);
  });

  it("rolls the Cluster back in place: every ConfigMap as it was, the later change gone, old token and kubeconfig work", async () => {
    await changeAfterSnapshot(admin);

    const started = Date.now();
    await snapshots.askRestore(world, "before", "first");
    const restored = await snapshots.where(
      world,
      "before",
      (s) => s.status?.lastRestore?.request === "first",
    );
    await serves(admin);
    console.log(
      `local restore: ${OBJECTS} ConfigMaps rolled back in ${Date.now() - started} ms (annotation → API server serving)`,
    );
    expect(restored.status?.lastRestore).toMatchObject({ outcome: "Restored" });
    expect(conditionOf(restored, "Restored")).toMatchObject({ status: "True", reason: "Restored" });

    const back = await contents(admin);
    expect(back.size).toBe(OBJECTS);
    expect(back.has("object-after")).toBe(false);
    expect(back).toEqual(written);
    // The token granted before the snapshot authenticates against the restored control plane (same endpoint, same keys).
    const withToken = bearerKubeConfig(admin, token);
    const review = await withToken.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${APP}:reader`);
    // The Cluster is Ready again at the same endpoint.
    const again = await world.waitFor("source", isReady, 120_000);
    expect(again?.status?.endpoints?.[0]?.url).toBe(cluster.status?.endpoints?.[0]?.url);
  });

  it("makes a new Cluster from the snapshot (a clone): every object of then, the token of before works, its own endpoint", async () => {
    const started = Date.now();
    await snapshots.createClone(world, "clone", "before", { profile: LOCAL_PROFILE });
    const clone = (await world.waitFor("clone", isReady, 180_000)) as Cluster;
    console.log(
      `local clone: a Cluster of ${OBJECTS} ConfigMaps made from a snapshot in ${Date.now() - started} ms (created → Ready)`,
    );
    const endpoint = clone.status?.endpoints?.[0]?.url ?? "";
    expect(endpoint).not.toBe(cluster.status?.endpoints?.[0]?.url);
    const cloneAdmin = await localAdmin(world, clone);
    expect(await contents(cloneAdmin)).toEqual(written);
    // The token granted by the original before the snapshot authenticates at the clone (its issuer is accepted there).
    const withToken = bearerKubeConfig(cloneAdmin, token, endpoint);
    const review = await withToken.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${APP}:reader`);
  });

  it("takes a consistent snapshot while a client writes: the clone holds exactly the first k of its writes, no gap", async () => {
    const core = admin.makeApiClient(CoreV1Api);
    const stream = "stream";
    await core.createNamespace({ body: { metadata: { name: stream } } });
    // One writer, each create after the one before: any consistent cut of etcd holds w-0 … w-(k-1) and no more.
    let stop = false;
    let created = 0;
    const writer = (async () => {
      while (!stop) {
        await core.createNamespacedConfigMap({
          namespace: stream,
          body: { metadata: { name: `w-${created}` }, data: { n: String(created) } },
        });
        created++;
      }
    })();
    await eventually(async () => expect(created).toBeGreaterThanOrEqual(50), { timeoutMs: 60_000 });
    await snapshots.create(world, "while-writing", "source");
    await snapshots.where(world, "while-writing", (s) => s.status?.phase === "Complete");
    stop = true;
    await writer;
    await snapshots.createClone(world, "clone-while-writing", "while-writing", { profile: LOCAL_PROFILE });
    const clone = (await world.waitFor("clone-while-writing", isReady, 180_000)) as Cluster;
    const cloneAdmin = await localAdmin(world, clone);
    const names = (
      await cloneAdmin.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: stream })
    ).items
      .map((item) => item.metadata?.name ?? "")
      .filter((name) => name.startsWith("w-"));
    const k = names.length;
    console.log(`local snapshot while writing: the clone holds ${k} of the writer's ${created} ConfigMaps`);
    expect(k).toBeGreaterThanOrEqual(50);
    expect(k).toBeLessThanOrEqual(created);
    expect(new Set(names)).toEqual(new Set(Array.from({ length: k }, (_, i) => `w-${i}`)));
  });

  it("does not make a Cluster from a snapshot that does not exist, and says so on the Cluster", async () => {
    await snapshots.createClone(world, "clone-of-nothing", "nope", { profile: LOCAL_PROFILE });
    const waiting = await world.waitFor(
      "clone-of-nothing",
      (c) => JSON.stringify(c?.status?.conditions ?? []).includes("ClusterSnapshot clusters/nope"),
      60_000,
    );
    const said = waiting?.status?.conditions?.find((c) =>
      c.message.includes("ClusterSnapshot clusters/nope"),
    );
    expect(said?.message).toContain("does not exist");
    expect(waiting?.status?.phase).not.toBe("Ready");
    await world.remove(RESOURCES.Cluster, "clone-of-nothing");
  });

  it("refuses a snapshot whose etcd data was altered (ChecksumMismatch), and the Cluster keeps its data", async () => {
    await snapshots.create(world, "second", "source", { folder: { path: "kept/here" } });
    const taken = await snapshots.where(world, "second", (s) => s.status?.phase === "Complete");
    expect(taken.status?.location?.folder).toBe(join(snapshotRoot, "kept", "here"));
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: APP, body: { metadata: { name: "object-survivor" } } });
    appendFileSync(
      join(taken.status?.location?.folder ?? "", taken.status?.location?.name ?? "", "etcd.db"),
      "x",
    );

    await snapshots.askRestore(world, "second", "corrupt");
    const refused = await snapshots.where(
      world,
      "second",
      (s) => s.status?.lastRestore?.request === "corrupt",
    );
    expect(refused.status?.lastRestore).toMatchObject({ outcome: "ChecksumMismatch" });
    expect(conditionOf(refused, "Restored")).toMatchObject({
      status: "False",
      reason: "ChecksumMismatch",
      message: expect.stringContaining("etcd.db does not match its manifest"),
    });
    expect(refused.status?.phase).toBe("Complete");
    // Nothing lost: the Cluster serves on, with what it held.
    expect(
      (await core.readNamespacedConfigMap({ namespace: APP, name: "object-survivor" })).metadata?.name,
    ).toBe("object-survivor");
    expect((await contents(admin)).size).toBe(OBJECTS + 1);
  });

  it("refuses to restore one Cluster's snapshot into another (ForeignSnapshot: not its CA and keys)", async () => {
    await world.createCluster("other", { profile: LOCAL_PROFILE });
    const other = (await world.waitFor("other", isReady, 180_000)) as Cluster;
    const before = await snapshots.read(world, "before");
    const location = before.status?.location;
    const error = await world.backend
      .restore?.(targetOf(other), {
        location: { folder: location?.folder ?? "" },
        name: location?.name ?? "",
      })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toMatchObject({ name: "SnapshotRejectedError", reason: "ForeignSnapshot" });
    expect((error as Error).message).toContain("taken from Cluster clusters/source");
    expect(await world.readCluster("other")).toSatisfy(isReady);
  });

  it("finishes a restore a crash cut short: the cluster stays stopped, through a restart of the backend, until restore is asked again", async () => {
    const other = (await world.readCluster("other")) as Cluster;
    const reference = { location: { folder: join(snapshotRoot, "crash") }, name: "other-1" };
    await world.backend.snapshot?.(targetOf(other), reference);
    const otherAdmin = await localAdmin(world, other);
    await otherAdmin.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "after-the-snapshot" } },
    });
    // What a kill -9 midway through restore leaves: the mark written, the processes stopped, the data not yet swapped.
    const folder = join(state, "clusters", other.metadata.uid ?? "");
    writeFileSync(join(folder, "restoring"), `${reference.name}\n`);
    await stopPersistentControlPlane(folder);
    // A new instance on the same state (an engine restarted) supervises once before it returns: it must not start it.
    const restarted = await locals.open(state);
    expect((await inspectPersistentControlPlane(folder)).running).toBe(false);
    expect(await restarted.observe(targetOf(other))).toMatchObject({
      exists: true,
      phase: "provisioning",
      message: expect.stringContaining("being rolled back to snapshot other-1"),
    });
    await restarted.restore?.(targetOf(other), reference);
    await eventually(
      async () => expect(await restarted.observe(targetOf(other))).toMatchObject({ phase: "ready" }),
      {
        timeoutMs: 120_000,
      },
    );
    const names = (
      await otherAdmin.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: "default" })
    ).items.map((item) => item.metadata?.name);
    expect(names).not.toContain("after-the-snapshot");
    expect(existsSync(join(folder, "restoring"))).toBe(false);
  });

  it("fails a snapshot of a missing Cluster with ClusterNotFound", async () => {
    await snapshots.create(world, "of-nothing", "missing");
    const failed = await snapshots.where(world, "of-nothing", (s) => s.status?.phase === "Failed", 60_000);
    expect(conditionOf(failed, "Ready")).toMatchObject({
      status: "False",
      reason: "ClusterNotFound",
      message: expect.stringContaining("missing does not exist"),
    });
  });

  it("refuses by CEL a storage path that leaves the engine's snapshot folder, and a changed spec", async () => {
    await expect(
      snapshots.create(world, "escape", "source", { folder: { path: "../../etc" } }),
    ).rejects.toThrow(/stay under the engine's snapshot folder/);
    await expect(
      world.custom.patchNamespacedCustomObject(
        {
          ...CLUSTER_SNAPSHOT_RESOURCE,
          namespace: world.namespace,
          name: "before",
          body: { spec: { cluster: { name: "other" } } },
        },
        mergePatch,
      ),
    ).rejects.toThrow(/spec cannot change/);
  });
});

describe("the local backend and the conformance kit's snapshot part (contract 1.7)", {
  timeout: 300_000,
}, () => {
  it("snapshots, restores in place, and refuses altered and foreign snapshots as the contract says", async () => {
    await checkSnapshotConformance(createBackend, { readyTimeoutMs: 90_000 });
  });
});
