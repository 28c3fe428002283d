/** The ClusterSnapshot step: waits for its Cluster, takes the snapshot once, records it, rolls back once per request. */
import { describe, expect, it } from "vitest";
import type { ClusterSnapshot } from "../../../../src/api/cluster-snapshot.ts";
import type { SnapshotManifest, SnapshotStorageFailure } from "../../../../src/api/control-plane-snapshot.ts";
import { snapshotReference } from "../../../../src/machines/cluster-snapshot/location.ts";
import type {
  RestoreOutcome,
  SnapshotClusterFact,
} from "../../../../src/machines/cluster-snapshot/machine.ts";
import { SNAPSHOT_FINALIZER, stepClusterSnapshot } from "../../../../src/machines/cluster-snapshot/step.ts";

const timing = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };
const ROOT = "/var/snapshots";
const READY: SnapshotClusterFact = { found: true, uid: "c-uid", ready: true };

const snapshot = (
  status?: ClusterSnapshot["status"],
  annotations?: Record<string, string>,
  storage?: ClusterSnapshot["spec"]["storage"],
) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "ClusterSnapshot",
    metadata: {
      name: "before",
      namespace: "team",
      uid: "s-uid",
      generation: 1,
      ...(annotations ? { annotations } : {}),
    },
    spec: { cluster: { name: "source" }, ...(storage ? { storage } : {}) },
    ...(status ? { status } : {}),
  }) as ClusterSnapshot;

const manifest: SnapshotManifest = {
  format: 1,
  backend: "local",
  cluster: { uid: "c-uid", namespace: "team", name: "source", endpoint: "https://127.0.0.1:6443" },
  kubernetesVersion: "1.36.3",
  takenAt: "2026-01-01T00:00:00.000Z",
  files: [{ name: "etcd.db", size: 100, sha256: "ab" }],
  size: 100,
  checksum: "sha256:feed",
};

const step = (
  object: ClusterSnapshot,
  cluster: SnapshotClusterFact,
  more: {
    taken?: SnapshotManifest;
    restored?: RestoreOutcome;
    lastError?: string;
    storageFailure?: SnapshotStorageFailure;
    removed?: boolean;
    usedBy?: readonly string[];
  } = {},
) => stepClusterSnapshot({ object, cluster, root: ROOT, now: "2026-01-01T00:01:00Z", timing, ...more });

const condition = (object: { status?: ClusterSnapshot["status"] }, type: string) =>
  object.status?.conditions?.find((c) => c.type === type);

/** The snapshot after `result`'s status is written. */
const withStep = (object: ClusterSnapshot, result: ReturnType<typeof step>) =>
  ({ ...object, metadata: result.desired.metadata, status: result.desired.status }) as ClusterSnapshot;

describe("a ClusterSnapshot step", () => {
  it("fails a snapshot of a missing Cluster with ClusterNotFound and a Warning, ordering nothing", () => {
    const result = step(snapshot(), { found: false });
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    expect(condition(result.desired, "Ready")).toMatchObject({ status: "False", reason: "ClusterNotFound" });
    expect(result.events).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "ClusterNotFound",
        message: expect.stringContaining("team/source does not exist"),
      }),
    ]);
  });

  it("fails a snapshot of a Cluster whose backend takes none with SnapshotsUnsupported, naming why", () => {
    const result = step(snapshot(), { ...READY, unsupported: "its backend existing takes no snapshots" });
    expect(result.state).toBe("failed");
    expect(condition(result.desired, "Ready")).toMatchObject({
      reason: "SnapshotsUnsupported",
      message: expect.stringContaining("existing takes no snapshots"),
    });
  });

  it("keeps a failed snapshot failed, with its reason, when the Cluster appears later", () => {
    const failed = withStep(snapshot(), step(snapshot(), { found: false }));
    const result = step(failed, READY);
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    expect(condition(result.desired, "Ready")).toMatchObject({ reason: "ClusterNotFound" });
  });

  it("waits for a Cluster that is not Ready", () => {
    const result = step(snapshot(), { found: true, uid: "c-uid", ready: false });
    expect(result.state).toBe("pending");
    expect(result.commands).toEqual([]);
    expect(condition(result.desired, "Ready")).toMatchObject({ reason: "ClusterNotReady" });
  });

  it("takes the snapshot of a Ready Cluster into <root>/<namespace>/<name>-<uid>", () => {
    const result = step(snapshot(), READY);
    expect(result.state).toBe("taking");
    expect(result.desired.status?.phase).toBe("Taking");
    expect(result.commands).toEqual([
      { kind: "snapshot", snapshot: { location: { folder: "/var/snapshots/team" }, name: "before-s-uid" } },
    ]);
  });

  it("shows a failing snapshot as SnapshotFailed and orders it again", () => {
    const taking = withStep(snapshot(), step(snapshot(), READY));
    const result = step(taking, READY, {
      lastError: "etcd at http://127.0.0.1:1 refused a snapshot: HTTP 503",
    });
    expect(result.state).toBe("taking");
    expect(result.commands).toHaveLength(1);
    expect(condition(result.desired, "Ready")).toMatchObject({ status: "False", reason: "SnapshotFailed" });
  });

  it("shows why the storage failed (StorageAccessDenied) instead of SnapshotFailed, and orders it again", () => {
    const taking = withStep(snapshot(), step(snapshot(), READY));
    const result = step(taking, READY, {
      lastError: "the S3 store at http://s3.test, bucket b refused the credentials of Secret team/c",
      storageFailure: "StorageAccessDenied",
    });
    expect(result.state).toBe("taking");
    expect(result.commands).toHaveLength(1);
    expect(condition(result.desired, "Ready")).toMatchObject({
      status: "False",
      reason: "StorageAccessDenied",
      message: expect.stringContaining("bucket b"),
    });
  });

  it("records what was taken (uid, endpoint, size, checksum, location) once, with one Event, then rests", () => {
    const taking = withStep(snapshot(), step(snapshot(), READY));
    const result = step(taking, READY, { taken: manifest });
    expect(result.state).toBe("complete");
    expect(result.commands).toEqual([]);
    expect(result.desired.status).toMatchObject({
      phase: "Complete",
      cluster: { uid: "c-uid", endpoint: "https://127.0.0.1:6443" },
      location: { folder: "/var/snapshots/team", name: "before-s-uid" },
      size: 100,
      checksum: "sha256:feed",
    });
    expect(condition(result.desired, "Ready")).toMatchObject({ status: "True", reason: "Taken" });
    expect(result.events).toEqual([
      expect.objectContaining({ reason: "Taken", message: expect.stringContaining("100 bytes") }),
    ]);
    const again = step(withStep(taking, result), READY, { taken: manifest });
    expect(again.state).toBe("complete");
    expect(again.events).toEqual([]);
    expect(again.desired.status).toEqual(withStep(taking, result).status);
  });

  it("stays complete when its Cluster goes (the snapshot outlives it)", () => {
    const complete = withStep(
      snapshot(),
      step(withStep(snapshot(), step(snapshot(), READY)), READY, { taken: manifest }),
    );
    expect(step(complete, { found: false }).state).toBe("complete");
  });

  describe("rollback by the restore annotation", () => {
    const complete = withStep(
      snapshot(),
      step(withStep(snapshot(), step(snapshot(), READY)), READY, { taken: manifest }),
    );
    const asked = (request: string) =>
      ({
        ...complete,
        metadata: { ...complete.metadata, annotations: { "engine.openmcp.cloud/restore": request } },
      }) as ClusterSnapshot;

    it("orders the restore from where the snapshot was recorded", () => {
      const result = step(asked("r1"), READY);
      expect(result.state).toBe("restoring");
      expect(result.commands).toEqual([
        {
          kind: "restore",
          request: "r1",
          snapshot: { location: { folder: "/var/snapshots/team" }, name: "before-s-uid" },
        },
      ]);
      expect(condition(result.desired, "Restored")).toMatchObject({ status: "False", reason: "Restoring" });
    });

    it("records a done restore and rests; the same value asks nothing more, a new one asks again", () => {
      const restoring = withStep(asked("r1"), step(asked("r1"), READY));
      const done = step(restoring, READY, {
        restored: { request: "r1", outcome: "Restored", message: "rolled back" },
      });
      expect(done.state).toBe("complete");
      expect(done.desired.status?.lastRestore).toMatchObject({ request: "r1", outcome: "Restored" });
      expect(condition(done.desired, "Restored")).toMatchObject({ status: "True", reason: "Restored" });
      expect(done.events).toEqual([expect.objectContaining({ type: "Normal", reason: "Restored" })]);
      const rested = withStep(restoring, done);
      expect(step(rested, READY).commands).toEqual([]);
      const anew = {
        ...rested,
        metadata: { ...rested.metadata, annotations: { "engine.openmcp.cloud/restore": "r2" } },
      };
      expect(step(anew as ClusterSnapshot, READY).commands).toEqual([
        expect.objectContaining({ kind: "restore", request: "r2" }),
      ]);
    });

    it("answers a refused snapshot (ChecksumMismatch) with a False condition and a Warning, and does not retry", () => {
      const restoring = withStep(asked("bad"), step(asked("bad"), READY));
      const refused = step(restoring, READY, {
        restored: {
          request: "bad",
          outcome: "ChecksumMismatch",
          message: "file etcd.db does not match its manifest",
        },
      });
      expect(refused.state).toBe("complete");
      expect(refused.commands).toEqual([]);
      expect(condition(refused.desired, "Restored")).toMatchObject({
        status: "False",
        reason: "ChecksumMismatch",
      });
      expect(refused.events).toEqual([
        expect.objectContaining({ type: "Warning", reason: "ChecksumMismatch" }),
      ]);
      expect(step(withStep(restoring, refused), READY).commands).toEqual([]);
    });

    it("retries a restore that fails otherwise, showing RestoreFailed", () => {
      const restoring = withStep(asked("r1"), step(asked("r1"), READY));
      const result = step(restoring, READY, { lastError: "etcdutl could not restore: disk full" });
      expect(result.state).toBe("restoring");
      expect(result.commands).toEqual([expect.objectContaining({ kind: "restore" })]);
      expect(condition(result.desired, "Restored")).toMatchObject({ reason: "RestoreFailed" });
    });

    it("retries a restore whose storage fails, showing why (StorageBucketMissing)", () => {
      const restoring = withStep(asked("r1"), step(asked("r1"), READY));
      const result = step(restoring, READY, {
        lastError: "the S3 store at http://s3.test, bucket gone: the bucket does not exist",
        storageFailure: "StorageBucketMissing",
      });
      expect(result.state).toBe("restoring");
      expect(result.commands).toEqual([expect.objectContaining({ kind: "restore" })]);
      expect(condition(result.desired, "Restored")).toMatchObject({
        status: "False",
        reason: "StorageBucketMissing",
        message: expect.stringContaining("bucket gone"),
      });
    });
  });
});

describe("where a snapshot goes", () => {
  it("is a folder under the root: the namespace, or the relative path asked", () => {
    expect(snapshotReference(snapshot(), ROOT).location.folder).toBe("/var/snapshots/team");
    expect(
      snapshotReference(snapshot(undefined, undefined, { folder: { path: "a/b" } }), ROOT).location.folder,
    ).toBe("/var/snapshots/a/b");
  });

  it("never leaves the root, whatever the path (the CRD refuses such paths already)", () => {
    for (const path of ["../x", "/etc", "a/../../b"])
      expect(
        snapshotReference(snapshot(undefined, undefined, { folder: { path } }), ROOT).location.folder,
      ).toBe("/var/snapshots/team");
  });
});

describe("a snapshot in an S3-compatible store", () => {
  const s3 = {
    endpoint: "http://s3.test:7070",
    bucket: "snaps",
    prefix: "engine",
    credentialsSecretRef: { name: "keys" },
  };

  it("is the bucket and prefix named by the spec, its Secret named, no credentials in the command", () => {
    const result = step(snapshot(undefined, undefined, { s3 }), READY);
    expect(result.commands).toEqual([
      {
        kind: "snapshot",
        snapshot: {
          location: {
            s3: {
              endpoint: "http://s3.test:7070",
              bucket: "snaps",
              prefix: "engine",
              forcePathStyle: true,
              credentialsSecret: "team/keys",
            },
          },
          name: "before-s-uid",
        },
      },
    ]);
  });

  it("records the bucket (not a folder) and restores from it", () => {
    const object = snapshot(undefined, undefined, { s3 });
    const taking = withStep(object, step(object, READY));
    const complete = withStep(taking, step(taking, READY, { taken: manifest }));
    expect(complete.status?.location).toEqual({
      s3: { endpoint: "http://s3.test:7070", bucket: "snaps", prefix: "engine" },
      name: "before-s-uid",
    });
    const asked = {
      ...complete,
      metadata: { ...complete.metadata, annotations: { "engine.openmcp.cloud/restore": "1" } },
    };
    const result = step(asked, READY);
    expect(result.commands).toEqual([
      expect.objectContaining({
        kind: "restore",
        snapshot: expect.objectContaining({
          location: { s3: expect.objectContaining({ bucket: "snaps", credentialsSecret: "team/keys" }) },
          name: "before-s-uid",
        }),
      }),
    ]);
  });

  describe("deletion: its data leaves the store before the object goes", () => {
    const complete = withStep(
      snapshot(),
      step(withStep(snapshot(), step(snapshot(), READY)), READY, { taken: manifest }),
    );
    const deleted = (object: ClusterSnapshot) =>
      ({
        ...object,
        metadata: { ...object.metadata, deletionTimestamp: "2026-01-01T00:02:00Z" },
      }) as ClusterSnapshot;
    const finalizers = (result: ReturnType<typeof step>) => result.desired.metadata.finalizers ?? [];

    it("sets its finalizer with the step that orders the snapshot (before anything is written)", () => {
      const result = step(snapshot(), READY);
      expect(finalizers(result)).toEqual([SNAPSHOT_FINALIZER]);
      expect(complete.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    });

    it("gives a snapshot made before the finalizer existed its finalizer at its next look", () => {
      const legacy = { ...complete, metadata: { ...complete.metadata, finalizers: [] } } as ClusterSnapshot;
      const result = step(legacy, READY);
      expect(result.state).toBe("complete");
      expect(finalizers(result)).toEqual([SNAPSHOT_FINALIZER]);
    });

    it("orders its data removed from where it was recorded, keeping the finalizer meanwhile", () => {
      const result = step(deleted(complete), { found: false });
      expect(result.state).toBe("deleting.removing");
      expect(result.desired.status?.phase).toBe("Deleting");
      expect(result.commands).toEqual([
        { kind: "remove", snapshot: { location: { folder: "/var/snapshots/team" }, name: "before-s-uid" } },
      ]);
      expect(finalizers(result)).toEqual([SNAPSHOT_FINALIZER]);
      expect(condition(result.desired, "Removed")).toMatchObject({ status: "False", reason: "Removing" });
      // Ready still says what the snapshot is.
      expect(condition(result.desired, "Ready")).toMatchObject({ status: "True", reason: "Taken" });
    });

    it("keeps the finalizer while the store cannot be used, naming the store and the reason, and orders it again", () => {
      const removing = withStep(deleted(complete), step(deleted(complete), READY));
      const result = step(removing, READY, {
        lastError: "the S3 store at http://127.0.0.1:1, bucket b does not answer (ECONNREFUSED)",
        storageFailure: "StorageUnreachable",
      });
      expect(result.state).toBe("deleting.removing");
      expect(result.commands).toHaveLength(1);
      expect(finalizers(result)).toEqual([SNAPSHOT_FINALIZER]);
      expect(condition(result.desired, "Removed")).toMatchObject({
        status: "False",
        reason: "StorageUnreachable",
        message: expect.stringMatching(/before-s-uid in \/var\/snapshots\/team.*ECONNREFUSED/),
      });
    });

    it("lets go once the data is removed: finalizer off, one Removed Event", () => {
      const removing = withStep(deleted(complete), step(deleted(complete), READY));
      const result = step(removing, READY, { removed: true });
      expect(result.state).toBe("deleting.released");
      expect(result.commands).toEqual([]);
      expect(finalizers(result)).toEqual([]);
      expect(result.events).toEqual([
        expect.objectContaining({
          type: "Normal",
          reason: "Removed",
          message: expect.stringContaining("before-s-uid"),
        }),
      ]);
    });

    it("holds the deletion while a Cluster is made from it (nothing removed), then removes once it is made", () => {
      const held = step(deleted(complete), READY, { usedBy: ["clone"] });
      expect(held.state).toBe("deleting.held");
      expect(held.commands).toEqual([]);
      expect(finalizers(held)).toEqual([SNAPSHOT_FINALIZER]);
      expect(condition(held.desired, "Removed")).toMatchObject({
        status: "False",
        reason: "InUse",
        message: expect.stringContaining("Cluster clone is being made from it"),
      });
      expect(held.events).toEqual([expect.objectContaining({ reason: "DeletionHeld" })]);
      const still = step(withStep(deleted(complete), held), READY, { usedBy: ["clone"] });
      expect(still.events).toEqual([]);
      const made = step(withStep(deleted(complete), held), READY, { usedBy: [] });
      expect(made.state).toBe("deleting.removing");
      expect(made.commands).toEqual([expect.objectContaining({ kind: "remove" })]);
    });

    it("does not take again a snapshot deleted while it is being taken: only its leftovers are removed", () => {
      const taking = withStep(snapshot(), step(snapshot(), READY));
      const result = step(deleted(taking), READY, { lastError: "etcd refused" });
      expect(result.state).toBe("deleting.removing");
      expect(result.commands).toEqual([expect.objectContaining({ kind: "remove" })]);
    });

    it("removes nothing of a deleted snapshot without our finalizer (a person gave its data up)", () => {
      const given = deleted({
        ...complete,
        metadata: { ...complete.metadata, finalizers: [] },
      } as ClusterSnapshot);
      const result = step(given, READY, { usedBy: ["clone"] });
      expect(result.state).toBe("deleting.released");
      expect(result.commands).toEqual([]);
      expect(result.events).toEqual([]);
    });
  });
});
