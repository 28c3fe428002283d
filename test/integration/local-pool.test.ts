/**
 * A warm pool of real local clusters (each an etcd, a kube-apiserver and a controller-manager of this machine)
 * served by the engine on a real management API server: with a pool of 2, three Clusters created at once — two
 * bound to the pool's clusters (the time to Ready printed), the third made as a cluster of its own — and the pool
 * back at 2. A bound Cluster's admin access is its member's API server; deleting all leaves no cluster folder.
 */
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { LocalPoolWorld } from "../support/local-pool-world.ts";
import {
  adminOf,
  burstOfOneMore,
  deleteAll,
  poolMemberOf,
  type RunningPoolWorld,
} from "../support/pool-burst.ts";

const local = new LocalPoolWorld("local-pool");
let world: RunningPoolWorld;

beforeAll(async () => {
  world = await local.start();
}, 180_000);

afterAll(async () => {
  await world?.stop();
  local.remove();
});

describe("a warm pool of 2 real local clusters", { timeout: 300_000 }, () => {
  it("serves two of three Clusters created at once, makes the third a cluster of its own, and refills to 2", async () => {
    const { fromPool, made } = await burstOfOneMore(world, "local");

    // A bound Cluster's admin access is its member's kube-apiserver (the member's folder, named by its id).
    for (const { cluster } of fromPool) {
      const member = poolMemberOf(cluster) ?? "";
      const { record } = await inspectPersistentControlPlane(join(local.clustersDirectory, member));
      const admin = await adminOf(world, cluster);
      expect(new URL(admin.getCurrentCluster()?.server ?? "").port).toBe(String(record?.ports.apiServer));
      expect((await admin.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    }
    // The third is a cluster of its own, in a folder named by its uid; five in all: two bound, one made, two idle.
    expect(local.folders()).toContain(made.cluster.metadata.uid);
    expect(local.folders()).toHaveLength(5);
  });

  it("deletes a bound Cluster's cluster with it, and the idle ones with the pool: no cluster left", async () => {
    await deleteAll(world, () => local.folders().length === 0);
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
