/**
 * `openmcp-engine run` killed with kill -9 mid-way, for each kind a run drives on an API server alone: a
 * Cluster mid-provisioning (exactly one backend create), ClusterRequests mid-scheduling (no Cluster made
 * twice, no grant lost), a Rollout mid-run (every Cluster asked once, the run finished by the second engine), a
 * ClusterSnapshot of a real local cluster mid-write (killed while its files are staged: the second engine writes it
 * whole, what the first left is gone, every file matches its manifest), one mid-upload to an S3-compatible store
 * (versitygw; killed with files in the bucket and no manifest: the second engine uploads it whole) and a rollback
 * mid-restore (killed once the cluster's folder is marked: the second engine restores it). The EngineCluster's case
 * needs Cluster API's manager: capi-provider.heavy.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import type { ClusterSnapshot } from "../../src/api/cluster-snapshot.ts";
import { CLUSTER_REQUEST_LABELS } from "../../src/api/constants/cluster-request.ts";
import { CLUSTER_SNAPSHOT_RESOURCE } from "../../src/api/constants/cluster-snapshot.ts";
import { CHANGED_BY_ROLLOUT_ANNOTATION, ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { Rollout } from "../../src/api/rollout.ts";
import { stopPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { servedRequests } from "../../src/machines/cluster-request/cluster-claims.ts";
import { readFolderSnapshot } from "../../src/providers/shared/folder-snapshots.ts";
import { readS3Snapshot } from "../../src/providers/shared/s3-snapshots.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { aCluster, aClusterRequest, aProviderConfig } from "../support/builders.ts";
import * as snapshots from "../support/cluster-snapshots.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type KillNineCase, killNineMidway } from "../support/kill-nine.ts";
import { engineRunArgs } from "../support/processes.ts";
import { findVersitygw, type S3Server, startS3Server } from "../support/s3-server.ts";
import { changeAfterSnapshot, configMapOf, contents, writeConfigMaps } from "../support/snapshot-objects.ts";
import { startWorld, type World } from "../support/world.ts";

let world: World;
/** Every `--state-dir` and configuration of this file: a temporary folder, never the repository's `.state/`. */
const folder = mkdtempSync(join(tmpdir(), "kill-nine-"));

beforeAll(async () => {
  world = await startWorld({ engine: false });
  const core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["ops", "fleet", "teams", "waves", SNAPS])
    await core.createNamespace({ body: { metadata: { name } } });
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  writeFileSync(join(folder, "scheduler.yaml"), SCHEDULER_CONFIG);
});

// The upload case's S3 server, built here on a fresh machine (minutes, maybe while s3-snapshots builds it: the build
// script lets one build at a time), not within that case's own timeout.
beforeAll(() => {
  findVersitygw();
}, 900_000);

afterAll(async () => {
  // A snapshot case that failed before deleting its Cluster leaves that local cluster's processes running (they
  // outlive an engine by design): every persistent control plane under the folder is stopped.
  const records = readdirSync(folder, { recursive: true, encoding: "utf8" }).filter(
    (file) => basename(file) === "record.json",
  );
  for (const record of records)
    await stopPersistentControlPlane(join(folder, dirname(record))).catch(() => undefined);
  await s3?.stop();
  await world?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** `run` for provider `ops` on the world's API server, keeping state in `<folder>/<state>`. */
const runArgs = (state: string, ...more: string[]) =>
  engineRunArgs(
    {
      provider: "ops",
      environment: "test",
      kubeconfig: world.controlPlane.kubeconfigPath,
      stateDir: join(folder, state),
    },
    ...more,
  );

const SCHEDULER_CONFIG = `
scheduler:
  scope: Cluster
  strategy: Balanced
  purposeMappings:
    mcp:
      template:
        metadata: {namespace: fleet}
        spec: {profile: test.ops.sim, tenancy: Exclusive}
    workload:
      tenancyCount: 3
      template:
        metadata: {namespace: fleet}
        spec: {profile: test.ops.sim, tenancy: Shared}
`;

const aClusterMidProvisioning: KillNineCase = {
  kind: "Cluster",
  get args() {
    return runArgs("cluster", "--backend-option=delay=2s", "--log-level=debug");
  },
  create: async () => {
    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "ops",
      body: aCluster({ name: "survivor", namespace: "ops", profile: "test.ops.sim", tenancy: "Exclusive" }),
    });
  },
  midway: async () => {
    await world.waitForObject<Cluster>(
      RESOURCES.Cluster,
      "survivor",
      (c) => c?.status?.providerStatus?.state === "provisioning",
      { namespace: "ops" },
    );
  },
  finished: async () => {
    const ready = await world.waitForObject<Cluster>(
      RESOURCES.Cluster,
      "survivor",
      (c) => c?.status?.phase === "Ready",
      {
        namespace: "ops",
      },
    );
    expect(ready?.status?.providerStatus).toMatchObject({ state: "ready" });
    const created = new SimulatedBackend({ stateDirectory: join(folder, "cluster", "simulated") })
      .createdTotal;
    expect(created).toBe(1);
  },
};

const REQUESTS = Array.from({ length: 30 }, (_, i) => `req-${i}`);

const clusterRequestsMidScheduling: KillNineCase = {
  kind: "ClusterRequest",
  get args() {
    return runArgs("requests", `--scheduler-config=${join(folder, "scheduler.yaml")}`);
  },
  create: async () => {
    for (const [i, name] of REQUESTS.entries()) {
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: "teams",
        body: aClusterRequest({
          name,
          namespace: "teams",
          purpose: i % 3 === 0 ? "mcp" : "workload",
          // Generated names are the hard case: only the Cluster's finalizer and the grant find them again.
          ...(i % 6 === 0 ? { labels: { [CLUSTER_REQUEST_LABELS.randomizeClusterName]: "true" } } : {}),
        }),
      });
    }
  },
  // Kill it while it is scheduling: some requests granted, not all.
  midway: async () => {
    await eventually(
      async () =>
        (await world.list<ClusterRequest>(RESOURCES.ClusterRequest, "teams")).some(
          (r) => r.status?.phase === "Granted",
        ),
      { what: "the first grant", intervalMs: 20 },
    );
  },
  finished: async () => {
    const requests = await eventually(
      async () => {
        const all = await world.list<ClusterRequest>(RESOURCES.ClusterRequest, "teams");
        const granted = all.filter((r) => r.status?.phase === "Granted").map((r) => r.metadata.name);
        expect(granted.sort()).toEqual([...REQUESTS].sort());
        return all;
      },
      { what: "every request Granted after the restart", timeoutMs: 60_000 },
    );
    const clusters = await world.list<Cluster>(RESOURCES.Cluster, "fleet");
    const grants = await world.list<ClusterRequestGrant>(RESOURCES.ClusterRequestGrant, "teams");
    for (const request of requests) {
      const uid = request.metadata.uid ?? "";
      const holding = clusters.filter((cluster) => servedRequests(cluster).includes(uid));
      expect(holding, `Clusters serving ${request.metadata.name}`).toHaveLength(1);
      const grant = grants.find((g) => g.metadata.name === request.metadata.name);
      expect(grant?.spec).toMatchObject({
        requestUID: uid,
        clusterRef: { name: holding[0]?.metadata.name, namespace: "fleet" },
      });
      expect(request.status?.cluster).toEqual(grant?.spec.clusterRef);
    }
    // No orphan: every Cluster serves someone; Exclusive ones exactly one, Shared ones at most three.
    for (const cluster of clusters) {
      const served = servedRequests(cluster).length;
      expect(served, cluster.metadata.name).toBeGreaterThan(0);
      expect(served, cluster.metadata.name).toBeLessThanOrEqual(cluster.spec.tenancy === "Exclusive" ? 1 : 3);
    }
    expect(clusters.filter((c) => c.spec.tenancy === "Exclusive")).toHaveLength(10);
  },
};

const WAVE = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, "0")}`);

const readWaves = async () =>
  (await world.custom.getNamespacedCustomObject({
    ...ROLLOUT_RESOURCE,
    namespace: "waves",
    name: "waves",
  })) as Rollout;

const aRolloutMidRun: KillNineCase = {
  kind: "Rollout",
  get args() {
    return runArgs("rollout", "--backend-option=provisionDelay=0s", "--backend-option=updateDelay=1s");
  },
  create: async () => {
    for (const name of WAVE) {
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "waves",
        body: {
          ...aCluster({ name, namespace: "waves", profile: "test.ops.sim", tenancy: "Exclusive" }),
          spec: { profile: "test.ops.sim", tenancy: "Exclusive", kubernetes: { version: "1.33.6" } },
        },
      });
    }
    await eventually(
      async () =>
        (await world.list<Cluster>(RESOURCES.Cluster, "waves")).filter((c) => c.status?.phase === "Ready")
          .length === WAVE.length,
      { what: "the wave's Clusters Ready", timeoutMs: 60_000 },
    );
    await world.custom.createNamespacedCustomObject({
      ...ROLLOUT_RESOURCE,
      namespace: "waves",
      body: {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "Rollout",
        metadata: { name: "waves" },
        spec: { version: "1.34.2", maxUnavailable: 3, stages: [{ name: "rest", share: 100 }] },
      },
    });
  },
  // Kill it mid-run: some Clusters done, most not.
  midway: async () => {
    await eventually(
      async () => {
        const done = (await readWaves()).status?.stages?.find((stage) => stage.name === "rest")?.done ?? 0;
        return done >= 3;
      },
      { what: "three Clusters of the stage done", intervalMs: 50, timeoutMs: 60_000 },
    );
  },
  finished: async () => {
    const rollout = await eventually(
      async () => satisfying(await readWaves(), (current) => current.status?.phase === "Succeeded"),
      { what: "the rollout Succeeded after the restart", timeoutMs: 90_000 },
    );
    const clusters = await world.list<Cluster>(RESOURCES.Cluster, "waves");
    for (const cluster of clusters) {
      expect(cluster.spec.kubernetes?.version).toBe("1.34.2");
      // One spec change each: a second write of the version would be a second generation only if it differed,
      // so the Events (each names the Clusters it asked) say it too.
      expect(cluster.metadata.generation, cluster.metadata.name).toBe(2);
      expect(cluster.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBe(
        `waves/${rollout?.metadata.uid}`,
      );
    }
    const events = await world.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: "waves", fieldSelector: "involvedObject.name=waves" });
    const asked = events.items
      .filter((event) => event.reason === "ClustersChanged")
      .flatMap((event) => (event.message ?? "").replace(/^.*: /, "").split(", "));
    expect(asked.length, "Clusters asked, as the Events tell").toBeGreaterThan(0);
    expect(new Set(asked).size, `each asked once: ${asked.join(" ")}`).toBe(asked.length);
  },
};

/** The namespace of the snapshot case; its engine's state folder, where its snapshots go (`<state>/snapshots/<ns>`). */
const SNAPS = "snaps";
const SNAPSHOT_STATE = "snapshot";
/** Enough data that etcd's snapshot takes a while to stream into the staged folder. */
const SNAPSHOT_OBJECTS = 2_000;
const snapshotsFolder = () => join(folder, SNAPSHOT_STATE, "snapshots", SNAPS);
/** The staged folders of unfinished snapshot writes in the snapshot folder. */
const partials = () =>
  existsSync(snapshotsFolder())
    ? readdirSync(snapshotsFolder()).filter((name) => name.includes(".partial-"))
    : [];

/** The file `name` somewhere below `root` (the local backend's cluster folders sit under the engine's state). */
function fileBelow(root: string, name: string): string | undefined {
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true }))
    if (entry.isFile() && join(entry.parentPath, entry.name).endsWith(name))
      return join(entry.parentPath, entry.name);
  return undefined;
}

/** Where the snapshot cases' local clusters live, and their admin access. */
interface LocalCluster {
  readonly folder: string;
  readonly admin: KubeConfig;
}

/**
 * Cluster `name` of ProviderConfig `loc` (the local backend, made once) in namespace snaps, Ready, with
 * `objects` ConfigMaps written into it through its own admin kubeconfig (as its folder keeps it).
 */
async function localClusterWithConfigMaps(name: string, objects: number): Promise<LocalCluster> {
  await world.custom
    .createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "loc", backend: "local", providerRef: { name: "ops" } }),
    })
    .catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  const made = (await world.custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: SNAPS,
    body: aCluster({ name, namespace: SNAPS, profile: "test.ops.loc", tenancy: "Exclusive" }),
  })) as Cluster;
  await world.waitForObject<Cluster>(RESOURCES.Cluster, name, (c) => c?.status?.phase === "Ready", {
    namespace: SNAPS,
    timeoutMs: 180_000,
  });
  // Written once its processes serve, which the engine may see first (the Cluster Ready a moment before).
  const kubeconfig = await eventually(
    () =>
      satisfying(
        fileBelow(join(folder, SNAPSHOT_STATE), `${made.metadata.uid}/kubeconfig`),
        (file) => file !== undefined,
      ) as string,
    { what: `the kubeconfig of the local cluster ${made.metadata.uid}`, timeoutMs: 60_000, intervalMs: 200 },
  );
  const admin = new KubeConfig();
  admin.loadFromFile(kubeconfig);
  await writeConfigMaps(admin, objects);
  return { folder: dirname(kubeconfig), admin };
}

/** Deletes the snapshot and Cluster `name` of namespace snaps; resolves once the Cluster (its processes) is gone. */
async function deleteLocalCluster(snapshot: string, name: string): Promise<void> {
  await world.custom.deleteNamespacedCustomObject({
    ...CLUSTER_SNAPSHOT_RESOURCE,
    namespace: SNAPS,
    name: snapshot,
  });
  await world.custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: SNAPS, name });
  await world.waitForObject<Cluster>(RESOURCES.Cluster, name, (c) => c === undefined, {
    namespace: SNAPS,
    timeoutMs: 120_000,
  });
}

/** Resolves once `file` exists in `directory` (watched: at once, not at the next poll). */
function appears(directory: string, present: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(directory, () => {
      if (!present()) return;
      watcher.close();
      resolve();
    });
  });
}

const aSnapshotMidWrite: KillNineCase = {
  kind: "ClusterSnapshot",
  get args() {
    return runArgs(SNAPSHOT_STATE);
  },
  create: async () => {
    await localClusterWithConfigMaps("kept", SNAPSHOT_OBJECTS);
    // Watched from before the snapshot exists: the kill comes as soon as its staged folder does.
    mkdirSync(snapshotsFolder(), { recursive: true });
    staged = appears(snapshotsFolder(), () => partials().length > 0);
    await snapshots.create(snapsWorld(), "mid", "kept");
  },
  midway: () => staged,
  finished: async () => {
    // The first engine died while writing: its staged folder is there, no snapshot is complete.
    const left = partials();
    expect(left).toHaveLength(1);
    expect(readdirSync(snapshotsFolder()).filter((name) => !name.includes(".partial-"))).toEqual([]);
    const taken = (await snapshots.where(
      snapsWorld(),
      "mid",
      (s) => s.status?.phase === "Complete",
    )) as ClusterSnapshot;
    // Written whole by the second engine: every file as its manifest says, and nothing of the first's left.
    const location = taken.status?.location;
    expect(location?.folder).toBe(snapshotsFolder());
    const stored = await readFolderSnapshot({
      location: { folder: location?.folder ?? "" },
      name: location?.name ?? "",
    });
    expect(stored.manifest.files.length).toBeGreaterThan(0);
    expect(stored.manifest.size).toBeGreaterThan(SNAPSHOT_OBJECTS * 200);
    expect(readdirSync(snapshotsFolder())).toEqual([location?.name]);
    console.log(
      `kill -9 mid-snapshot: killed with ${left[0]} staged; the next engine wrote ${location?.name} (${stored.manifest.size} bytes, ${stored.manifest.files.length} files)`,
    );
    // The local cluster's processes go with its Cluster (they outlive an engine).
    await deleteLocalCluster("mid", "kept");
  },
};

/** A restore's window is the cluster's stop, the swap and the start: a few objects show it rolled back. */
const RESTORED_OBJECTS = 300;
let restored: LocalCluster | undefined;
const snapsWorld = () => ({ custom: world.custom, namespace: SNAPS });

const aRestoreMidway: KillNineCase = {
  kind: "ClusterSnapshot restore",
  get args() {
    return runArgs(SNAPSHOT_STATE);
  },
  create: async () => {
    restored = await localClusterWithConfigMaps("rolled", RESTORED_OBJECTS);
    await snapshots.create(snapsWorld(), "before", "rolled");
    await snapshots.where(snapsWorld(), "before", (s) => s.status?.phase === "Complete");
    await changeAfterSnapshot(restored.admin);
    // The backend marks the cluster's folder first, then stops its processes and swaps its etcd data.
    const marked = () => existsSync(join(restored?.folder ?? "", "restoring"));
    staged = appears(restored.folder, marked);
    await snapshots.askRestore(snapsWorld(), "before", "r1");
  },
  midway: () => staged,
  finished: async (_first, second) => {
    // The first engine died mid-restore: the cluster's folder is still marked.
    const mark = join(restored?.folder ?? "", "restoring");
    expect(existsSync(mark)).toBe(true);
    const admin = restored?.admin as KubeConfig;
    const answered = await snapshots.where(
      snapsWorld(),
      "before",
      (s) => s.status?.lastRestore?.request === "r1",
    );
    expect(answered.status?.lastRestore).toMatchObject({ outcome: "Restored" });
    await world.waitForObject<Cluster>(RESOURCES.Cluster, "rolled", (c) => c?.status?.phase === "Ready", {
      namespace: SNAPS,
      timeoutMs: 180_000,
    });
    // Rolled back by the second engine: every ConfigMap of the snapshot, the later one gone, the mark removed.
    const back = await eventually(() => contents(admin), {
      what: "the rolled-back cluster to serve",
      timeoutMs: 120_000,
    });
    expect(back.size).toBe(RESTORED_OBJECTS);
    expect(back.has("object-after")).toBe(false);
    expect(back.get("object-00007")).toEqual(configMapOf(7).data);
    // The mark goes with the restore that finishes. (Once, in a CI run on a loaded machine, it was still there when
    // the restored data was read: the restores the next engine ran are counted to tell a second one.)
    await eventually(() => expect(existsSync(mark)).toBe(false), {
      what: "the restoring mark removed",
      timeoutMs: 120_000,
    });
    const restores = second
      .output()
      .split("\n")
      .filter((line) => line.includes("rolled back to a snapshot"));
    console.log(`kill -9 mid-restore: the next engine restored ${restores.length} time(s)`);
    expect(restores.length).toBeGreaterThan(0);
    await deleteLocalCluster("before", "rolled");
  },
};
const BUCKET = "snapshots";
let s3: S3Server | undefined;
/** Object keys in the store's bucket folder (versitygw keeps each object as a file there). */
const bucketFiles = (): string[] =>
  s3 && existsSync(join(s3.root, BUCKET))
    ? readdirSync(join(s3.root, BUCKET), { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && !entry.parentPath.includes(".sgwtmp"))
        .map((entry) => join(entry.parentPath, entry.name).slice(join(s3?.root ?? "", BUCKET).length + 1))
    : [];

/** Resolves once `present` holds, looked at every 5 ms (the store's nested folders come and go as it writes). */
async function soonAs(present: () => boolean): Promise<void> {
  while (!present()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const anUploadMidway: KillNineCase = {
  kind: "ClusterSnapshot upload",
  get args() {
    return runArgs(SNAPSHOT_STATE);
  },
  create: async () => {
    s3 = await startS3Server();
    await s3.createBucket(BUCKET);
    await world.controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: SNAPS,
      body: {
        metadata: { name: "s3-credentials" },
        stringData: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      },
    });
    await localClusterWithConfigMaps("uploaded", SNAPSHOT_OBJECTS);
    staged = soonAs(() => bucketFiles().length > 0);
    await snapshots.create(snapsWorld(), "up", "uploaded", {
      s3: { endpoint: s3.endpoint, bucket: BUCKET, credentialsSecretRef: { name: "s3-credentials" } },
    });
  },
  midway: () => staged,
  finished: async () => {
    // The first engine died mid-upload: some of the snapshot's files in the bucket, not its manifest.
    const before = bucketFiles();
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((key) => key.endsWith("manifest.json"))).toEqual([]);
    const taken = (await snapshots.where(
      snapsWorld(),
      "up",
      (s) => s.status?.phase === "Complete",
    )) as ClusterSnapshot;
    const name = taken.status?.location?.name ?? "";
    // Uploaded whole by the second engine: read back (every file checked against the manifest).
    const staging = mkdtempSync(join(tmpdir(), "kill-nine-s3-read-"));
    try {
      const stored = await readS3Snapshot(
        {
          location: {
            s3: {
              endpoint: s3?.endpoint ?? "",
              bucket: BUCKET,
              forcePathStyle: true,
              credentialsSecret: `${SNAPS}/s3-credentials`,
              credentials: { accessKeyId: s3?.accessKeyId ?? "", secretAccessKey: s3?.secretAccessKey ?? "" },
            },
          },
          name,
        },
        staging,
      );
      expect(stored.manifest.size).toBeGreaterThan(SNAPSHOT_OBJECTS * 200);
      expect(bucketFiles().sort()).toEqual(
        [...stored.manifest.files.map((file) => `${name}/${file.name}`), `${name}/manifest.json`].sort(),
      );
      console.log(
        `kill -9 mid-upload: killed with ${before.length} of ${stored.manifest.files.length} files in the bucket; the next engine uploaded ${name} whole`,
      );
      await stored.release();
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    await deleteLocalCluster("up", "uploaded");
    await s3?.stop();
  },
};

let staged: Promise<void> = Promise.resolve();

describe("openmcp-engine run killed with kill -9 mid-way", () => {
  it.each([
    aClusterMidProvisioning,
    clusterRequestsMidScheduling,
    aRolloutMidRun,
    aSnapshotMidWrite,
    anUploadMidway,
    aRestoreMidway,
  ])(
    "$kind: the restarted engine finishes the work, orders nothing twice and stops cleanly on SIGTERM",
    (scenario) => killNineMidway(scenario),
    // The snapshot cases make a local cluster of 2,000 ConfigMaps first: 77–92 s at load 18, past 120 s at more.
    300_000,
  );
});
