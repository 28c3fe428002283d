/**
 * ClusterSnapshots of Clusters whose backend takes none (the simulated backend here; `existing` alike): the snapshot
 * fails with SnapshotsUnsupported naming the backend, and a Cluster asked to be made from a snapshot is not made at
 * all (no empty cluster in the clone's place), its condition saying why. On a real API server, no real clusters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterSnapshot } from "../../src/api/cluster-snapshot.ts";
import {
  CLUSTER_SNAPSHOT_RESOURCE,
  RESTORE_FROM_ANNOTATION,
} from "../../src/api/constants/cluster-snapshot.ts";
import { eventually, satisfying } from "../support/eventually.ts";
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
    await world.custom.createNamespacedCustomObject({
      ...CLUSTER_SNAPSHOT_RESOURCE,
      namespace: world.namespace,
      body: {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "ClusterSnapshot",
        metadata: { name: "of-plain" },
        spec: { cluster: { name: "plain" } },
      },
    });
    const failed = await eventually(
      async () =>
        satisfying(
          (await world.custom.getNamespacedCustomObject({
            ...CLUSTER_SNAPSHOT_RESOURCE,
            namespace: world.namespace,
            name: "of-plain",
          })) as ClusterSnapshot,
          (s) => s.status?.phase === "Failed",
        ),
      { what: "ClusterSnapshot of-plain Failed" },
    );
    expect(failed.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "SnapshotsUnsupported",
      message: expect.stringContaining("its backend simulated takes no snapshots"),
    });
    expect(world.calls.filter((call) => call.method === "snapshot" || call.method === "restore")).toEqual([]);
  });

  it("makes no Cluster from a snapshot there, saying its backend restores none", async () => {
    await world.createCluster("copy", {}, { annotations: { [RESTORE_FROM_ANNOTATION]: "of-plain" } });
    const said = await world.waitFor(
      "copy",
      (c) => JSON.stringify(c?.status?.conditions ?? []).includes("restores no snapshots"),
      30_000,
    );
    expect(said?.status?.phase).not.toBe("Ready");
    expect(world.callsAbout("create", `${world.namespace}/copy`)).toBe(0);
  });
});
