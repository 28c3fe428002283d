/** The ClusterSnapshotSchedule step: times due, catch-up, snapshots made once per time due, retention, bad input. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { ClusterSnapshot } from "../../../../src/api/cluster-snapshot.ts";
import type { ClusterSnapshotSchedule } from "../../../../src/api/cluster-snapshot-schedule.ts";
import { expiredSnapshots } from "../../../../src/machines/cluster-snapshot-schedule/retention.ts";
import { scheduleProblems, slotsAt } from "../../../../src/machines/cluster-snapshot-schedule/slots.ts";
import { stepClusterSnapshotSchedule } from "../../../../src/machines/cluster-snapshot-schedule/step.ts";

const CREATED = "2026-11-28T10:00:00Z";
const HOUR = 3_600_000;
const timing = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };

const schedule = (
  spec: Partial<ClusterSnapshotSchedule["spec"]> = {},
  status?: ClusterSnapshotSchedule["status"],
) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "ClusterSnapshotSchedule",
    metadata: { name: "hourly", namespace: "team", uid: "s1", generation: 1, creationTimestamp: CREATED },
    spec: { every: "1h", keep: 2, ...spec },
    ...(status ? { status } : {}),
  }) as ClusterSnapshotSchedule;

const cluster = (name: string, labels: Record<string, string> = {}) =>
  ({
    metadata: { name, namespace: "team", labels },
    spec: { profile: "p", tenancy: "Exclusive" },
  }) as Cluster;

/** A snapshot of the schedule of `clusterName`, due at `at`. */
const snapshot = (clusterName: string, at: string, phase: string, deleting = false) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "ClusterSnapshot",
    metadata: {
      name: `hourly-${clusterName}-${at}`,
      namespace: "team",
      labels: {
        "engine.openmcp.cloud/snapshot-schedule": "hourly",
        "engine.openmcp.cloud/snapshot-cluster": clusterName,
      },
      annotations: { "engine.openmcp.cloud/scheduled-at": at },
      ...(deleting ? { deletionTimestamp: "2026-11-28T20:00:00Z" } : {}),
    },
    spec: { cluster: { name: clusterName } },
    status: { phase },
  }) as ClusterSnapshot;

const at = (hours: number) => new Date(Date.parse(CREATED) + hours * HOUR).toISOString().replace(".000", "");

const step = (
  object: ClusterSnapshotSchedule,
  nowMs: number,
  more: Partial<Parameters<typeof stepClusterSnapshotSchedule>[0]> = {},
) =>
  stepClusterSnapshotSchedule({
    object,
    clusters: [cluster("a", { s: "y" }), cluster("b", { s: "y" }), cluster("c")],
    snapshots: [],
    now: new Date(nowMs).toISOString(),
    nowMs,
    timing,
    ...more,
  });

const withStep = (object: ClusterSnapshotSchedule, result: ReturnType<typeof step>) =>
  ({ ...object, status: result.desired.status }) as ClusterSnapshotSchedule;

describe("a ClusterSnapshotSchedule step", () => {
  it("makes a snapshot of each selected Cluster at once when made: named, labelled, owned, with its storage", () => {
    const object = schedule({ selector: { matchLabels: { s: "y" } }, storage: { folder: { path: "x" } } });
    const result = step(object, Date.parse(CREATED) + 5_000);
    expect(result.state).toBe("taking");
    expect(result.commands).toHaveLength(1);
    const [command] = result.commands;
    expect(command).toMatchObject({ kind: "create", slot: "2026-11-28T10:00:00Z" });
    const made = command?.kind === "create" ? command.snapshots : [];
    expect(made.map((s) => s.metadata.name)).toEqual(["hourly-a-20261128100000", "hourly-b-20261128100000"]);
    expect(made[0]).toMatchObject({
      metadata: {
        namespace: "team",
        labels: {
          "engine.openmcp.cloud/snapshot-schedule": "hourly",
          "engine.openmcp.cloud/snapshot-cluster": "a",
        },
        annotations: { "engine.openmcp.cloud/scheduled-at": "2026-11-28T10:00:00Z" },
        ownerReferences: [{ kind: "ClusterSnapshotSchedule", name: "hourly", uid: "s1", controller: true }],
      },
      spec: { cluster: { name: "a" }, storage: { folder: { path: "x" } } },
    });
    expect(result.desired.status).toMatchObject({ nextScheduled: "2026-11-28T11:00:00Z", selected: 2 });
  });

  it("records lastScheduled and one Event once made, then rests until the next time due", () => {
    const nowMs = Date.parse(CREATED) + 5_000;
    const object = schedule({ every: "5m" });
    const first = step(object, nowMs);
    const created = { slot: "2026-11-28T10:00:00Z", clusters: ["a", "b", "c"] };
    const done = step(withStep(object, first), nowMs, { created });
    expect(done.state).toBe("scheduled");
    expect(done.commands).toEqual([]);
    expect(done.desired.status?.lastScheduled).toBe("2026-11-28T10:00:00Z");
    expect(done.events).toEqual([
      expect.objectContaining({ reason: "SnapshotsCreated", message: expect.stringContaining("a, b, c") }),
    ]);
    // At rest it looks again just after the next time due.
    expect(done.requeueAfterMs).toBe(5 * 60_000 - 5_000 + 250);
    const rested = step(withStep(object, done), nowMs + 60_000);
    expect(rested.state).toBe("scheduled");
    expect(rested.commands).toEqual([]);
    expect(rested.events).toEqual([]);
  });

  it("takes only the latest of several missed times due, at once", () => {
    const object = schedule({}, { state: "scheduled", lastScheduled: "2026-11-28T10:00:00Z" });
    const result = step(object, Date.parse(CREATED) + 5 * HOUR + 60_000);
    expect(result.commands).toEqual([
      expect.objectContaining({ kind: "create", slot: "2026-11-28T15:00:00Z" }),
    ]);
  });

  it("deletes, per Cluster, the snapshots beyond keep, and says so", () => {
    const snapshots = [
      snapshot("a", at(0), "Complete"),
      snapshot("a", at(1), "Complete"),
      snapshot("a", at(2), "Complete"),
      snapshot("b", at(1), "Complete"),
      snapshot("b", at(2), "Complete"),
    ];
    const object = schedule({}, { state: "scheduled", lastScheduled: at(2) });
    const result = step(object, Date.parse(CREATED) + 2 * HOUR + 60_000, { snapshots });
    expect(result.state).toBe("pruning");
    expect(result.commands).toEqual([{ kind: "delete", names: [`hourly-a-${at(0)}`] }]);
    expect(result.events).toEqual([
      expect.objectContaining({
        reason: "SnapshotsPruned",
        message: expect.stringContaining("beyond keep 2"),
      }),
    ]);
    // Deleted by this engine, the cache not showing it yet: not named again.
    const again = step(withStep(object, result), Date.parse(CREATED) + 2 * HOUR + 61_000, {
      snapshots,
      deleted: [`hourly-a-${at(0)}`],
    });
    expect(again.state).toBe("scheduled");
    expect(again.commands).toEqual([]);
  });

  it("shows bad input as Ready=False InvalidSchedule naming the field, and does nothing", () => {
    const result = step(schedule({ every: "6 hours", keep: 0 }), Date.parse(CREATED) + 5_000, {
      snapshots: [snapshot("a", at(0), "Complete"), snapshot("a", at(1), "Complete")],
    });
    expect(result.state).toBe("invalid");
    expect(result.commands).toEqual([]);
    const ready = result.desired.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "InvalidSchedule" });
    expect(ready?.message).toMatch(/every: "6 hours" is not a Go duration.*keep: 0 must be/);
  });

  it("shows a failing create as ScheduleFailed and orders it again", () => {
    const taking = withStep(schedule(), step(schedule(), Date.parse(CREATED) + 5_000));
    const result = step(taking, Date.parse(CREATED) + 6_000, {
      lastError: "make 3 ClusterSnapshot(s) failed: 403",
    });
    expect(result.state).toBe("taking");
    expect(result.commands).toHaveLength(1);
    expect(result.desired.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "ScheduleFailed",
    });
  });
});

describe("a schedule's times due", () => {
  it("refuses every shorter than a minute or not a duration, and keep below 1", () => {
    expect(scheduleProblems("1h30m", 3)).toEqual([]);
    expect(scheduleProblems("30s", 1)).toEqual(["every: 30s is shorter than the shortest interval, 1m"]);
    expect(scheduleProblems("daily", 1)[0]).toMatch(/not a Go duration/);
    expect(scheduleProblems("1h", 0)[0]).toMatch(/keep/);
  });

  it("has the latest time due at or before now and the next one every interval after the creation", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 60_000, max: 30 * 24 * HOUR }),
        fc.integer({ min: -HOUR, max: 365 * 24 * HOUR }),
        (anchor, every, offset) => {
          const now = anchor + offset;
          const { latestMs, nextMs } = slotsAt(anchor, every, now);
          if (now < anchor) return latestMs === undefined && nextMs === anchor;
          return (
            latestMs !== undefined &&
            latestMs <= now &&
            now < nextMs &&
            nextMs - latestMs === every &&
            (latestMs - anchor) % every === 0
          );
        },
      ),
    );
  });
});

describe("a schedule's retention", () => {
  const phases = ["Complete", "Taking", "Pending", "Failed"] as const;

  it("keeps per Cluster the newest and the newest keep complete ones, never deletes the newest, names none twice", () => {
    let keptIncomplete = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            cluster: fc.constantFrom("a", "b"),
            phase: fc.constantFrom(...phases),
            deleting: fc.boolean(),
          }),
          {
            maxLength: 12,
          },
        ),
        fc.integer({ min: 1, max: 4 }),
        (entries, keep) => {
          const snapshots = entries.map((entry, index) =>
            snapshot(entry.cluster, at(index), entry.phase, entry.deleting),
          );
          const expired = new Set(expiredSnapshots(snapshots, keep));
          for (const name of ["a", "b"]) {
            const mine = snapshots.filter((s) => s.spec.cluster.name === name).reverse(); // newest first
            const newest = mine[0];
            if (newest && expired.has(newest.metadata.name ?? "")) return false;
            if (newest && newest.status?.phase !== "Complete") keptIncomplete++;
            const complete = mine.filter((s) => s.status?.phase === "Complete");
            // The newest keep complete ones stay; every other one but the newest goes (unless already deleting).
            for (const [index, s] of mine.entries()) {
              const kept = index === 0 || complete.slice(0, keep).includes(s);
              const named = expired.has(s.metadata.name ?? "");
              if (named !== (!kept && s.metadata.deletionTimestamp === undefined)) return false;
            }
          }
          return true;
        },
      ),
    );
    // The interesting branch is reached: a newest snapshot not complete is kept.
    expect(keptIncomplete).toBeGreaterThan(0);
  });
});
