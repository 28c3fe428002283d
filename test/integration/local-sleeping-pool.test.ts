/**
 * A sleeping warm pool of real local clusters (each an etcd, a kube-apiserver and a controller-manager of this
 * machine), served by the engine on a real management API server: a pool of 2 with 1 awake keeps one member
 * running and the other's processes stopped (its data kept); the first Cluster is bound to the running one, the
 * second to the sleeping one, woken for it (the times to Ready printed: the "first in ≤ 1 s, the second
 * in the wake time"); the woken cluster's admin access works; the pool goes back to 1 awake, 1 asleep; deleting
 * all leaves no cluster folder.
 */
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { inspectPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { LocalPoolWorld } from "../support/local-pool-world.ts";
import {
  adminOf,
  poolMemberOf,
  type RunningPoolWorld,
  readPool,
  timeToReady,
} from "../support/pool-burst.ts";

const local = new LocalPoolWorld("local-sleeping-pool");
let world: RunningPoolWorld;

/** The pool settled at 1 awake and 1 asleep: nothing being made, bound, woken or sent to sleep. */
const settled = () =>
  eventually(
    async () =>
      satisfying(
        await readPool(world),
        (pool) =>
          pool?.status?.idle === 1 &&
          pool.status.asleep === 1 &&
          pool.status.refilling === 0 &&
          pool.status.binding === 0 &&
          pool.status.hibernating === 0 &&
          pool.status.waking === 0,
      ),
    { what: "pool at 1 awake, 1 asleep", timeoutMs: world.patienceMs, intervalMs: 500 },
  ) as Promise<ClusterPool>;

const running = async (member: string) =>
  (await inspectPersistentControlPlane(join(local.clustersDirectory, member))).running;

beforeAll(async () => {
  world = await local.start({ awake: 1 });
}, 180_000);

afterAll(async () => {
  await world?.stop();
  local.remove();
});

describe("a sleeping pool of 2 real local clusters, 1 awake", { timeout: 300_000 }, () => {
  let asleep = "";

  it("keeps one member running and stops the other's processes, its data kept", async () => {
    const members = (await settled()).status?.members ?? [];
    asleep = members.find((member) => member.phase === "Hibernated")?.id ?? "";
    const awake = members.find((member) => member.phase === "Ready")?.id ?? "";
    expect(await running(awake)).toBe(true);
    expect(await running(asleep)).toBe(false);
    expect(local.folders().sort()).toEqual([asleep, awake].sort());
  });

  it("binds the first Cluster to the awake member at once, the second to the sleeping one once woken", async () => {
    const first = await timeToReady(world, "first");
    const second = await timeToReady(world, "second");
    console.log(
      `local sleeping pool: first Cluster Ready ${first.ms} ms after creation (awake member), second ${second.ms} ms (woken member)`,
    );
    expect(poolMemberOf(first.cluster)).not.toBe(asleep);
    expect(poolMemberOf(second.cluster)).toBe(asleep);
    // The woken cluster serves: its processes run again, and its admin access lists namespaces.
    expect(await running(asleep)).toBe(true);
    const admin = await adminOf(world, second.cluster);
    expect((await admin.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    // The pool refills to 1 awake and 1 asleep with new members.
    const ids = (await settled()).status?.members?.map((member) => member.id) ?? [];
    expect(ids).not.toContain(asleep);
    expect(ids).not.toContain(poolMemberOf(first.cluster));
  });

  it("deletes the Clusters' clusters with them, and the idle ones with the pool: no cluster left", async () => {
    for (const name of ["first", "second"])
      await world.custom.deleteNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: world.namespace,
        name,
      });
    await world.custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" });
    await eventually(async () => satisfying(local.folders(), (left) => left.length === 0), {
      what: "no local cluster folder left",
      timeoutMs: world.patienceMs,
      intervalMs: 1_000,
    });
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
