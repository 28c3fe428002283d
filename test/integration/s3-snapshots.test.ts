/**
 * ClusterSnapshots kept in a real S3-compatible store (versitygw, built by hack/s3/build.sh) of a real local cluster
 * driven by the engine on a real management API server, one cluster shared by every test. The store alone: a
 * snapshot whose upload was cut short (objects without a manifest) is not read as complete, and a retry finishes;
 * an upload failing midway leaves no manifest; a complete one is returned as it is; an altered object is refused. Through the engine: a snapshot to the bucket (every file and the manifest
 * listed there), a clone made from it (every ConfigMap back, compared by content), a rollback in place from it; a
 * wrong credential, a missing bucket, a missing Secret and an unreachable store each named on the object, and the
 * secret never in its status or Events. Retention: the store removes a snapshot (manifest first, leftovers of cut
 * uploads too, idempotent); a deleted ClusterSnapshot's objects leave the bucket before the object goes; one whose
 * store does not answer keeps its finalizer and names the store, until a person removes the finalizer. Upload and download times are printed (OPENMCP_SNAPSHOT_OBJECTS ConfigMaps;
 * default 1,000).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTER_SNAPSHOT_RESOURCE } from "../../src/api/constants/cluster-snapshot.ts";
import type { S3SnapshotLocation } from "../../src/api/control-plane-snapshot.ts";
import {
  readS3Snapshot,
  removeS3Snapshot,
  writeS3Snapshot,
} from "../../src/providers/shared/s3-snapshots.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import * as snapshots from "../support/cluster-snapshots.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { LOCAL_PROFILE, localAdmin, localBackends, startLocalWorld } from "../support/local-backend-state.ts";
import { eventsAbout } from "../support/object-events.ts";
import { findVersitygw, type S3Server, startS3Server } from "../support/s3-server.ts";
import { changeAfterSnapshot, contents, writeConfigMaps } from "../support/snapshot-objects.ts";
import { isReady, type World } from "../support/world.ts";

const OBJECTS = Number(process.env.OPENMCP_SNAPSHOT_OBJECTS ?? 1_000);
const BUCKET = "snapshots";

const locals = localBackends("s3-snapshots-");
const staging = mkdtempSync(join(tmpdir(), "s3-snapshots-staging-"));
let server: S3Server;
let world: World;
let cluster: Cluster;
let admin: KubeConfig;
let written = new Map<string, Record<string, string>>();

/** `spec.storage.s3` at the test's store. */
const s3Storage = (overrides: Record<string, unknown> = {}) => ({
  s3: {
    endpoint: server.endpoint,
    bucket: BUCKET,
    prefix: "engine/snapshots",
    credentialsSecretRef: { name: "s3-credentials" },
    ...overrides,
  },
});

/** ClusterSnapshot `name` of the world's Cluster `source`, kept in `storage`. */
const createSnapshotOfSource = (name: string, storage: object) =>
  snapshots.create(world, name, "source", storage);

const core = () => world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);

const createSecret = (name: string, accessKeyId: string, secretAccessKey: string) =>
  core().createNamespacedSecret({
    namespace: world.namespace,
    body: { metadata: { name }, stringData: { accessKeyId, secretAccessKey } },
  });

/** The object keys in the bucket under `prefix`. */
async function keysUnder(prefix: string): Promise<string[]> {
  const client = server.client();
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (listed.Contents ?? []).map((object) => object.Key ?? "").sort();
  } finally {
    client.destroy();
  }
}

// Built once per machine by hack/s3/build.sh (a few minutes the first time; at once afterwards).
beforeAll(() => {
  findVersitygw();
}, 900_000);

beforeAll(async () => {
  server = await startS3Server();
  await server.createBucket(BUCKET);
  world = await startLocalWorld(locals);
  await createSecret("s3-credentials", server.accessKeyId, server.secretAccessKey);
  await world.createCluster("source", { profile: LOCAL_PROFILE });
  cluster = (await world.waitFor("source", isReady, 180_000)) as Cluster;
  admin = await localAdmin(world, cluster);
  await writeConfigMaps(admin, OBJECTS);
  written = await contents(admin);
}, 300_000);

afterAll(async () => {
  await locals.close(world);
  await server?.stop();
  rmSync(staging, { recursive: true, force: true });
}, 120_000);

describe("the S3 snapshot store against versitygw", () => {
  const location = (): S3SnapshotLocation => ({
    endpoint: server.endpoint,
    bucket: BUCKET,
    prefix: "store",
    forcePathStyle: true,
    credentialsSecret: "test/none",
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  const description = {
    backend: "test",
    cluster: { uid: "u", namespace: "n", name: "c" },
    kubernetesVersion: "1.36.3",
    takenAt: "2026-01-01T00:00:00Z",
  };

  it("does not read an upload cut short (objects, no manifest) as complete; a retry finishes; a complete one is kept", async () => {
    const reference = { location: { s3: location() }, name: "cut-short" };
    // What a kill -9 during the upload leaves: some files uploaded, the manifest not.
    const client = server.client();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "store/cut-short/a.txt", Body: "half" }));
    client.destroy();
    await expect(readS3Snapshot(reference, staging)).rejects.toMatchObject({
      name: "SnapshotRejectedError",
      reason: "ChecksumMismatch",
      message: expect.stringContaining("missing or was never finished"),
    });

    const manifest = await writeS3Snapshot(
      reference,
      description,
      async (add) => {
        await add("a.txt", "hello");
        await add("b.bin", new Uint8Array([1, 2, 3]));
      },
      staging,
    );
    expect(await keysUnder("store/cut-short/")).toEqual([
      "store/cut-short/a.txt",
      "store/cut-short/b.bin",
      "store/cut-short/manifest.json",
    ]);
    const stored = await readS3Snapshot(reference, staging);
    expect(stored.manifest).toEqual(manifest);
    await stored.release();

    // Complete already: returned as it is, nothing written again.
    const again = await writeS3Snapshot(
      reference,
      description,
      () => Promise.reject(new Error("must not be called")),
      staging,
    );
    expect(again).toEqual(manifest);
  });

  it("leaves no manifest when an upload fails midway, and the next write finishes", async () => {
    const reference = { location: { s3: location() }, name: "failing" };
    // The store cannot take b.bin (its key is a folder in versitygw's tree): a.txt goes up, b.bin fails.
    const blocker = join(server.root, BUCKET, "store", "failing", "b.bin");
    mkdirSync(join(blocker, "in-the-way"), { recursive: true });
    const fill = async (add: (name: string, content: string) => Promise<void>) => {
      await add("a.txt", "first");
      await add("b.bin", "second");
    };
    await expect(writeS3Snapshot(reference, description, fill, staging)).rejects.toThrow(/b\.bin/);
    expect(await keysUnder("store/failing/")).not.toContain("store/failing/manifest.json");
    expect(await keysUnder("store/failing/")).toContain("store/failing/a.txt");
    await expect(readS3Snapshot(reference, staging)).rejects.toMatchObject({ reason: "ChecksumMismatch" });

    rmSync(blocker, { recursive: true, force: true });
    const manifest = await writeS3Snapshot(reference, description, fill, staging);
    expect(manifest.files.map((file) => file.name)).toEqual(["a.txt", "b.bin"]);
    const stored = await readS3Snapshot(reference, staging);
    expect(stored.manifest.checksum).toBe(manifest.checksum);
    await stored.release();
  });

  it("refuses a snapshot whose object in the bucket was altered (ChecksumMismatch)", async () => {
    const reference = { location: { s3: location() }, name: "altered" };
    await writeS3Snapshot(reference, description, (add) => add("a.txt", "hello"), staging);
    const client = server.client();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "store/altered/a.txt", Body: "hellO" }));
    client.destroy();
    await expect(readS3Snapshot(reference, staging)).rejects.toMatchObject({
      reason: "ChecksumMismatch",
      message: expect.stringContaining("a.txt does not match its manifest"),
    });
  });

  it("removes a snapshot, manifest first, with the leftovers of a cut upload; again and without a bucket is no error", async () => {
    const reference = { location: { s3: location() }, name: "removed" };
    await writeS3Snapshot(reference, description, (add) => add("a.txt", "hello"), staging);
    const client = server.client();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "store/removed/left.txt", Body: "x" }));
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "store/removed-other/a.txt", Body: "y" }));
    client.destroy();
    await removeS3Snapshot(reference);
    expect(await keysUnder("store/removed/")).toEqual([]);
    // A snapshot whose name begins the same is another one: left alone.
    expect(await keysUnder("store/removed-other/")).toEqual(["store/removed-other/a.txt"]);
    await removeS3Snapshot(reference);
    await removeS3Snapshot({
      location: { s3: { ...location(), bucket: "no-such-bucket" } },
      name: "removed",
    });
  });
});

describe(`ClusterSnapshots in S3 of a real local cluster with ${OBJECTS} ConfigMaps`, {
  timeout: 600_000,
}, () => {
  it("snapshots the Cluster into the bucket: every file and the manifest listed there", async () => {
    const started = Date.now();
    await createSnapshotOfSource("to-s3", s3Storage());
    const taken = await snapshots.where(world, "to-s3", (s) => s.status?.phase === "Complete");
    console.log(
      `s3 snapshot: ${OBJECTS} ConfigMaps snapshotted into S3 in ${Date.now() - started} ms (object created → Complete), ${taken.status?.size} bytes`,
    );
    expect(conditionOf(taken, "Ready")).toMatchObject({ status: "True", reason: "Taken" });
    const name = `to-s3-${taken.metadata.uid}`;
    expect(taken.status?.location).toEqual({
      s3: { endpoint: server.endpoint, bucket: BUCKET, prefix: "engine/snapshots" },
      name,
    });
    const keys = await keysUnder(`engine/snapshots/${name}/`);
    expect(keys).toContain(`engine/snapshots/${name}/etcd.db`);
    // Every file the manifest lists is in the bucket, and nothing else but the manifest.
    const reference = {
      location: {
        s3: {
          endpoint: server.endpoint,
          bucket: BUCKET,
          prefix: "engine/snapshots",
          forcePathStyle: true,
          credentialsSecret: "x/y",
          credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
        },
      },
      name,
    };
    const downloading = Date.now();
    const stored = await readS3Snapshot(reference, staging);
    console.log(
      `s3 snapshot: ${stored.manifest.size} bytes downloaded and checked in ${Date.now() - downloading} ms`,
    );
    await stored.release();
    expect(keys).toEqual(
      [...stored.manifest.files.map((file) => file.name), "manifest.json"]
        .sort()
        .map((file) => `engine/snapshots/${name}/${file}`),
    );
    expect(stored.manifest.checksum).toBe(taken.status?.checksum);
    expect(JSON.stringify(taken)).not.toContain(server.secretAccessKey);
  });

  it("makes a new Cluster from the S3 snapshot (a clone): every ConfigMap of then", async () => {
    const started = Date.now();
    await snapshots.createClone(world, "clone", "to-s3", { profile: LOCAL_PROFILE });
    const clone = (await world.waitFor("clone", isReady, 180_000)) as Cluster;
    console.log(
      `s3 clone: a Cluster of ${OBJECTS} ConfigMaps made from an S3 snapshot in ${Date.now() - started} ms`,
    );
    const cloneAdmin = await localAdmin(world, clone);
    expect(await contents(cloneAdmin)).toEqual(written);
  });

  it("rolls the Cluster back in place from the S3 snapshot", async () => {
    await changeAfterSnapshot(admin);
    const started = Date.now();
    await snapshots.askRestore(world, "to-s3", "first");
    const restored = await snapshots.where(world, "to-s3", (s) => s.status?.lastRestore?.request === "first");
    expect(restored.status?.lastRestore).toMatchObject({ outcome: "Restored" });
    const back = await eventually(() => contents(admin), { timeoutMs: 120_000, intervalMs: 200 });
    console.log(
      `s3 restore: rolled back from S3 in ${Date.now() - started} ms (annotation → API server serving)`,
    );
    expect(back).toEqual(written);
  });

  it("names a wrong credential on the object (StorageAccessDenied), never the secret", async () => {
    const wrong = `wrong-${server.secretAccessKey}`;
    await createSecret("wrong-credentials", server.accessKeyId, wrong);
    await createSnapshotOfSource(
      "wrong-credential",
      s3Storage({ credentialsSecretRef: { name: "wrong-credentials" } }),
    );
    const failing = await snapshots.where(
      world,
      "wrong-credential",
      (s) => conditionOf(s, "Ready")?.reason === "StorageAccessDenied",
      60_000,
    );
    const message = conditionOf(failing, "Ready")?.message ?? "";
    expect(message).toContain(server.endpoint);
    expect(message).toContain(`bucket ${BUCKET}`);
    expect(message).toContain(`${world.namespace}/wrong-credentials`);
    expect(JSON.stringify(failing)).not.toContain(wrong);
    expect(JSON.stringify(failing)).not.toContain(server.secretAccessKey);
    // The failure's Warning Event is there (so its text is checked), without the key.
    const events = await eventually(
      async () =>
        satisfying(await eventsAbout(world, "wrong-credential"), (text) =>
          text.includes("refused the credentials"),
        ),
      { what: "the Warning Event of the refused credentials", timeoutMs: 30_000 },
    );
    expect(events).not.toContain(wrong);
    expect(events).not.toContain(server.secretAccessKey);
  });

  it("names a missing bucket on the object (StorageBucketMissing)", async () => {
    await createSnapshotOfSource("no-bucket", s3Storage({ bucket: "no-such-bucket" }));
    const failing = await snapshots.where(
      world,
      "no-bucket",
      (s) => conditionOf(s, "Ready")?.reason === "StorageBucketMissing",
      60_000,
    );
    expect(conditionOf(failing, "Ready")?.message).toContain("bucket no-such-bucket");
  });

  it("names a missing credentials Secret on the object (CredentialsNotFound)", async () => {
    await createSnapshotOfSource("no-secret", s3Storage({ credentialsSecretRef: { name: "absent" } }));
    const failing = await snapshots.where(
      world,
      "no-secret",
      (s) => conditionOf(s, "Ready")?.reason === "CredentialsNotFound",
      60_000,
    );
    expect(conditionOf(failing, "Ready")?.message).toContain(`Secret ${world.namespace}/absent`);
  });

  it("names an unreachable store on the object (StorageUnreachable)", async () => {
    const [port] = (await freePorts(1)) as [number];
    await createSnapshotOfSource("unreachable", s3Storage({ endpoint: `http://127.0.0.1:${port}` }));
    const failing = await snapshots.where(
      world,
      "unreachable",
      (s) => conditionOf(s, "Ready")?.reason === "StorageUnreachable",
      90_000,
    );
    expect(conditionOf(failing, "Ready")?.message).toContain(`127.0.0.1:${port}`);
  });

  it("refuses by CEL a storage with both a folder and a bucket", async () => {
    await expect(createSnapshotOfSource("both", { folder: {}, ...s3Storage() })).rejects.toThrow(
      /exactly one kind of storage/,
    );
  });

  it("keeps a deleted snapshot whose store does not answer (finalizer, Removed=False naming the store) until a person removes the finalizer", async () => {
    const [port] = (await freePorts(1)) as [number];
    await createSnapshotOfSource("unanswered", s3Storage({ endpoint: `http://127.0.0.1:${port}` }));
    await snapshots.where(
      world,
      "unanswered",
      (s) => conditionOf(s, "Ready")?.reason === "StorageUnreachable",
      90_000,
    );
    await world.remove(CLUSTER_SNAPSHOT_RESOURCE, "unanswered");
    const held = await snapshots.where(
      world,
      "unanswered",
      (s) => conditionOf(s, "Removed")?.reason === "StorageUnreachable",
      90_000,
    );
    expect(held.metadata.finalizers).toEqual(["engine.openmcp.cloud/cluster-snapshot"]);
    expect(conditionOf(held, "Removed")?.message).toContain(`127.0.0.1:${port}`);
    await eventually(
      async () =>
        satisfying(await eventsAbout(world, "unanswered"), (text) =>
          text.includes(`remove snapshot unanswered-${held.metadata.uid}`),
        ),
      { what: "the Warning Event of the failed removal", timeoutMs: 30_000 },
    );
    // A person gives the data up: the object goes.
    await world.custom.patchNamespacedCustomObject(
      {
        ...CLUSTER_SNAPSHOT_RESOURCE,
        namespace: world.namespace,
        name: "unanswered",
        body: [
          { op: "test", path: "/metadata/finalizers/0", value: "engine.openmcp.cloud/cluster-snapshot" },
          { op: "remove", path: "/metadata/finalizers/0" },
        ],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    await eventually(
      async () => {
        await expect(snapshots.read(world, "unanswered")).rejects.toMatchObject({ code: 404 });
      },
      { what: "the snapshot gone", timeoutMs: 30_000 },
    );
  });

  it("removes a deleted snapshot's objects from the bucket before the object goes", async () => {
    const snapshot = await snapshots.read(world, "to-s3");
    const prefix = `engine/snapshots/to-s3-${snapshot.metadata.uid}/`;
    expect(await keysUnder(prefix)).toContain(`${prefix}manifest.json`);
    await world.remove(CLUSTER_SNAPSHOT_RESOURCE, "to-s3");
    await eventually(
      async () => {
        await expect(snapshots.read(world, "to-s3")).rejects.toMatchObject({ code: 404 });
      },
      { what: "the snapshot gone", timeoutMs: 60_000 },
    );
    expect(await keysUnder(prefix)).toEqual([]);
  });
});
