/**
 * ClusterSnapshotSchedules and the retention of ClusterSnapshots, on one real API server with the `local` backend (a
 * real etcd and API server per Cluster). A schedule takes a snapshot of each selected Cluster at once when it is made;
 * an engine started after a time due it missed (its clock shifted, no real waiting) takes it at once, and after several
 * missed takes only the latest, once; the oldest beyond `keep` is deleted, and its files leave the snapshot folder
 * before the object goes. Bad input (`every` not a duration or under a minute, `keep` 0) is refused by CEL. A deleted
 * ClusterSnapshot's files are removed before it goes; its deletion is held (Removed=False InUse, an Event) while a
 * Cluster is being made from it, and goes on once that Cluster is gone. A Rollout with `snapshots.beforeChange` makes a
 * ClusterSnapshot of its canary and asks the Cluster for the version only once it is Complete.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/api/clock.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterSnapshot } from "../../src/api/cluster-snapshot.ts";
import type { ClusterSnapshotSchedule } from "../../src/api/cluster-snapshot-schedule.ts";
import {
  CLUSTER_SNAPSHOT_RESOURCE,
  SNAPSHOT_CLUSTER_LABEL,
} from "../../src/api/constants/cluster-snapshot.ts";
import {
  SCHEDULE_LABEL,
  SNAPSHOT_SCHEDULE_RESOURCE,
} from "../../src/api/constants/cluster-snapshot-schedule.ts";
import { ROLLOUT_SNAPSHOT_LABELS } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { Engine } from "../../src/runtime/engine.ts";
import * as snapshots from "../support/cluster-snapshots.ts";
import { conditionOf } from "../support/conditions.ts";
import { metricSum } from "../support/engine-signals.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { LOCAL_PROFILE, localBackends, offerLocalProfile } from "../support/local-backend-state.ts";
import { eventsAbout } from "../support/object-events.ts";
import { isReady, startWorld, type World } from "../support/world.ts";
import { createRollout, rolloutWhere } from "../support/world-rollouts.ts";

const HOUR = 3_600_000;
const locals = localBackends("snapshot-schedules-");
/** The engine's snapshot folder, removed with the backends' state folders. */
const snapshotRoot = locals.folder();
const state = locals.folder();
let world: World;
let engine: Engine;

/** The real clock shifted by `offsetMs`: timers are real, `now` is later. */
const shifted = (offsetMs: number): Clock => ({
  now: () => systemClock.now() + offsetMs,
  schedule: (callback, ms) => systemClock.schedule(callback, ms),
});

/**
 * An engine on the world whose clock is `offsetMs` ahead, the snapshot kinds timed for a test, with a local backend of
 * its own on the one state folder (as after a restart: the clusters' processes run on).
 */
const startEngine = async (offsetMs: number) =>
  world.startEngine({
    backend: await locals.open(state),
    clock: shifted(offsetMs),
    kindSettings: {
      ClusterSnapshot: { folder: snapshotRoot, timing: { pollMs: 100, retryMs: 500 } },
      ClusterSnapshotSchedule: { timing: { pollMs: 100, retryMs: 500 } },
    },
  });

const scheduleBody = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "engine.openmcp.cloud/v1alpha1",
  kind: "ClusterSnapshotSchedule",
  metadata: { name },
  spec,
});

const createSchedule = (name: string, spec: Record<string, unknown>) =>
  world.custom.createNamespacedCustomObject({
    ...SNAPSHOT_SCHEDULE_RESOURCE,
    namespace: world.namespace,
    body: scheduleBody(name, spec),
  });

const readSchedule = async (name: string) =>
  (await world.custom.getNamespacedCustomObject({
    ...SNAPSHOT_SCHEDULE_RESOURCE,
    namespace: world.namespace,
    name,
  })) as ClusterSnapshotSchedule;

/** The snapshots of schedule `name`, oldest first. */
const snapshotsOf = async (name: string) =>
  (
    (await world.custom.listNamespacedCustomObject({
      ...CLUSTER_SNAPSHOT_RESOURCE,
      namespace: world.namespace,
      labelSelector: `${SCHEDULE_LABEL}=${name}`,
    })) as { items: ClusterSnapshot[] }
  ).items.sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));

const folderOf = (snapshot: ClusterSnapshot) =>
  join(snapshot.status?.location?.folder ?? "", snapshot.status?.location?.name ?? "");

const gone = (name: string) =>
  eventually(
    async () => {
      await expect(snapshots.read(world, name)).rejects.toMatchObject({ code: 404 });
    },
    { what: `ClusterSnapshot ${name} gone`, timeoutMs: 30_000 },
  );

beforeAll(async () => {
  world = await startWorld({ backend: await locals.open(state), engine: false });
  engine = await startEngine(0);
  await offerLocalProfile(world);
  await world.createCluster("a", { profile: LOCAL_PROFILE }, { labels: { snapshots: "hourly" } });
  // Never made (no such profile): selected by nothing, and a Cluster "being made" for the restore-from test.
  await world.createCluster("b", { profile: "no-such-profile" });
  await world.waitFor("a", isReady, 120_000);
}, 180_000);

afterAll(() => locals.close(world), 120_000);

describe("a ClusterSnapshotSchedule", { timeout: 90_000 }, () => {
  it("is refused by CEL when every is not a duration or under a minute, or keep is 0", async () => {
    await expect(createSchedule("bad-every", { every: "6 hours", keep: 1 })).rejects.toThrow(
      /every must be a Go duration/,
    );
    await expect(createSchedule("short-every", { every: "30s", keep: 1 })).rejects.toThrow(
      /every must be at least 1m/,
    );
    await expect(createSchedule("no-keep", { every: "1h", keep: 0 })).rejects.toThrow(/keep/);
  });

  it("takes a snapshot of each selected Cluster at once when made, owned and labelled, and says when the next is due", async () => {
    await createSchedule("hourly", {
      every: "1h",
      keep: 2,
      selector: { matchLabels: { snapshots: "hourly" } },
    });
    const [first] = await eventually(
      async () =>
        satisfying(
          await snapshotsOf("hourly"),
          (list) => list.length === 1 && list[0]?.status?.phase === "Complete",
        ),
      { what: "the first scheduled snapshot Complete", timeoutMs: 60_000 },
    );
    expect(first?.spec.cluster.name).toBe("a");
    expect(first?.metadata.labels?.[SNAPSHOT_CLUSTER_LABEL]).toBe("a");
    expect(first?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "ClusterSnapshotSchedule",
      name: "hourly",
    });
    const schedule = await eventually(
      async () => satisfying(await readSchedule("hourly"), (s) => s.status?.lastScheduled !== undefined),
      { what: "lastScheduled" },
    );
    const created = Date.parse(schedule.metadata.creationTimestamp ?? "");
    expect(Date.parse(schedule.status?.lastScheduled ?? "")).toBe(created);
    expect(Date.parse(schedule.status?.nextScheduled ?? "")).toBe(created + HOUR);
    expect(schedule.status?.selected).toBe(1);
    expect(conditionOf(schedule, "Ready")).toMatchObject({ status: "True", reason: "Scheduled" });
    expect(await eventsAbout(world, "hourly")).toContain("SnapshotsCreated");
  });

  it("takes the time due it missed at once when an engine starts after it", async () => {
    await engine.stop();
    engine = await startEngine(HOUR + 60_000);
    const list = await eventually(
      async () =>
        satisfying(
          await snapshotsOf("hourly"),
          (l) => l.length === 2 && l.every((s) => s.status?.phase === "Complete"),
        ),
      { what: "two scheduled snapshots Complete", timeoutMs: 60_000 },
    );
    expect(list.map((s) => s.spec.cluster.name)).toEqual(["a", "a"]);
  });

  it("after several missed takes only the latest, and deletes the oldest beyond keep with its files", async () => {
    const [oldest] = await snapshotsOf("hourly");
    expect(existsSync(folderOf(oldest as ClusterSnapshot))).toBe(true);
    await engine.stop();
    engine = await startEngine(5 * HOUR + 60_000);
    const list = await eventually(
      async () =>
        satisfying(
          await snapshotsOf("hourly"),
          (l) =>
            l.length === 2 &&
            l.every((s) => s.status?.phase === "Complete") &&
            l[0]?.metadata.name !== oldest?.metadata.name,
        ),
      { what: "the oldest deleted, the newest Complete", timeoutMs: 60_000 },
    );
    await gone(oldest?.metadata.name ?? "");
    expect(existsSync(folderOf(oldest as ClusterSnapshot))).toBe(false);
    const schedule = await readSchedule("hourly");
    const created = Date.parse(schedule.metadata.creationTimestamp ?? "");
    // One snapshot for the four times due it missed: the latest (+5h).
    expect(
      list.map((s) => Date.parse(s.metadata.annotations?.["engine.openmcp.cloud/scheduled-at"] ?? "")),
    ).toEqual([created + HOUR, created + 5 * HOUR]);
    expect(Date.parse(schedule.status?.lastScheduled ?? "")).toBe(created + 5 * HOUR);
    // Told once the reconcile that pruned has ended: Events are sent after its writes, in the background.
    await eventually(async () => expect(await eventsAbout(world, "hourly")).toContain("SnapshotsPruned"), {
      what: "the SnapshotsPruned Event",
      timeoutMs: 30_000,
    });
    expect(await metricSum(engine.metrics, "openmcp_engine_scheduled_snapshots_created_total")).toBe(1);
    expect(await metricSum(engine.metrics, "openmcp_engine_scheduled_snapshots_pruned_total")).toBe(1);
  });

  it("takes its snapshots and their files with it when deleted (the garbage collector follows the owner)", async () => {
    const list = await snapshotsOf("hourly");
    expect(list.every((snapshot) => existsSync(folderOf(snapshot)))).toBe(true);
    await world.remove(SNAPSHOT_SCHEDULE_RESOURCE, "hourly");
    await eventually(async () => satisfying(await snapshotsOf("hourly"), (l) => l.length === 0), {
      what: "the schedule's snapshots gone",
      timeoutMs: 60_000,
    });
    expect(list.some((snapshot) => existsSync(folderOf(snapshot)))).toBe(false);
  });
});

describe("deleting a ClusterSnapshot", { timeout: 90_000 }, () => {
  it("removes its files, then the object; held while a Cluster is being made from it", async () => {
    await snapshots.create(world, "manual", "a");
    const taken = await snapshots.where(world, "manual", (s) => s.status?.phase === "Complete", 60_000);
    expect(taken.metadata.finalizers).toEqual(["engine.openmcp.cloud/cluster-snapshot"]);
    // A Cluster being made from it (it never will be: its profile does not exist).
    await snapshots.createClone(world, "clone", "manual", { profile: "no-such-profile" });
    await world.remove(CLUSTER_SNAPSHOT_RESOURCE, "manual");
    const held = await snapshots.where(
      world,
      "manual",
      (s) => conditionOf(s, "Removed")?.reason === "InUse",
      30_000,
    );
    expect(conditionOf(held, "Removed")?.message).toContain("Cluster clone is being made from it");
    expect(existsSync(folderOf(taken))).toBe(true);
    // Told once the reconcile that held it has ended: Events are sent after its writes, in the background (CI run
    // 42: read before it was there).
    await eventually(async () => expect(await eventsAbout(world, "manual")).toContain("DeletionHeld"), {
      what: "the DeletionHeld Event",
      timeoutMs: 30_000,
    });
    // The gauge reads the engine's cache at each scrape, which may not hold the condition read above yet.
    await eventually(
      async () =>
        expect(
          await metricSum(engine.metrics, "openmcp_engine_cluster_snapshots_not_removed", {
            reason: "InUse",
          }),
        ).toBe(1),
      { what: "the snapshots_not_removed gauge at 1", timeoutMs: 30_000 },
    );

    await world.remove(RESOURCES.Cluster, "clone");
    await gone("manual");
    expect(existsSync(folderOf(taken))).toBe(false);
  });
});

describe("a Rollout with snapshots.beforeChange", { timeout: 90_000 }, () => {
  it("snapshots its Cluster before asking it for the version, then asks it", async () => {
    await createRollout(world, "upgrade", {
      version: "1.36",
      selector: { matchLabels: { snapshots: "hourly" } },
      snapshots: { beforeChange: true },
    });
    const ofRun = async () =>
      (
        (await world.custom.listNamespacedCustomObject({
          ...CLUSTER_SNAPSHOT_RESOURCE,
          namespace: world.namespace,
          labelSelector: `${ROLLOUT_SNAPSHOT_LABELS.rollout}=upgrade`,
        })) as { items: ClusterSnapshot[] }
      ).items;
    const [made] = await eventually(async () => satisfying(await ofRun(), (list) => list.length === 1), {
      what: "the rollout's snapshot made",
      timeoutMs: 30_000,
    });
    // Asked only once its snapshot is Complete.
    const cluster = (await world.readCluster("a")) as Cluster;
    if ((await snapshots.read(world, made?.metadata.name ?? "")).status?.phase !== "Complete")
      expect(cluster.spec.kubernetes?.version).not.toBe("1.36");
    const rollout = await rolloutWhere(
      world,
      "upgrade",
      "the rollout Succeeded",
      (r) => r.status?.phase === "Succeeded",
    );
    expect(rollout.status?.targets?.map((t) => [t.name, t.progress])).toEqual([["a", "done"]]);
    expect((await snapshots.read(world, made?.metadata.name ?? "")).status?.phase).toBe("Complete");
    expect(((await world.readCluster("a")) as Cluster).spec.kubernetes?.version).toBe("1.36");
    expect(await eventsAbout(world, "upgrade")).toContain("SnapshotsCreated");
  });
});
