/**
 * ClusterSnapshots of Clusters whose backend takes none (the simulated backend here; `existing` alike): the snapshot
 * fails with SnapshotsUnsupported naming the backend, and a Cluster asked to be made from a snapshot is not made at
 * all (no empty cluster in the clone's place), its condition saying why. On a real API server, no real clusters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as snapshots from "../support/cluster-snapshots.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

let world: World;

beforeAll(async () => {
  world = await startWorld();
  await world.createCluster("plain");
  await world.waitFor("plain", isReady, 60_000);
});

afterAll(async () => {
  await world?.stop();
});

describe("snapshots on a backend that takes none", () => {
  it("fails a ClusterSnapshot with SnapshotsUnsupported, naming the backend, and asks the backend nothing", async () => {
    await snapshots.create(world, "of-plain", "plain");
    const failed = await snapshots.where(world, "of-plain", (s) => s.status?.phase === "Failed", 30_000);
    expect(failed.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "SnapshotsUnsupported",
      message: expect.stringContaining("its backend simulated takes no snapshots"),
    });
    expect(world.calls.filter((call) => call.method === "snapshot" || call.method === "restore")).toEqual([]);
  });

  it("makes no Cluster from a snapshot there, saying its backend restores none", async () => {
    await snapshots.createClone(world, "copy", "of-plain");
    const said = await world.waitFor(
      "copy",
      (c) => JSON.stringify(c?.status?.conditions ?? []).includes("restores no snapshots"),
      30_000,
    );
    expect(said?.status?.phase).not.toBe("Ready");
    expect(world.callsAbout("create", `${world.namespace}/copy`)).toBe(0);
  });
});
