/**
 * Sharded mode as operators run it: replicas as separate `run --sharding` processes on a real API server,
 * one simulated backend behind them all (a short delay), every backend call journaled with the replica
 * that made it. 900 Clusters split evenly; a replica frozen past its renew deadline (started again, as its
 * Deployment would), one killed with kill -9 mid-provisioning, another cut off from the API server (a
 * partition, through a TCP proxy), a new one joining; in the end every Cluster
 * Ready, each created at the backend exactly once, and no Cluster ever worked on by two replicas at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoordinationV1Api, type CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import type { Lease } from "../../src/runtime/leadership/lease.ts";
import { acknowledgedIn } from "../../src/runtime/sharding/membership.ts";
import { ownerOf } from "../../src/runtime/sharding/rendezvous.ts";
import { eventually } from "../support/eventually.ts";
import { overlappingCalls } from "../support/journal-checks.ts";
import { type BackendCall, readJournals } from "../support/journaling-backend.ts";
import { writeKubeconfigThroughProxy } from "../support/proxied-kubeconfig.ts";
import {
  cachedOf,
  clustersCreated,
  createClusters,
  journalOf,
  metricOf,
  type ShardedReplica,
  shardIdentityOf,
  shardMembersOf,
  startShardedReplica,
  startShardedWorld,
} from "../support/sharded-replicas.ts";
import { startTcpProxyProcess, type TcpProxyProcess } from "../support/tcp-proxy-process.ts";

const NAMESPACE = "fleet";
/** 300 each: enough for the split's ±20 % to say something, without flooding one API server from three replicas. */
const CLUSTERS = 900;
/**
 * Twice the engine's default Lease duration and renew deadline (a 1 s retry period, against 2 s, so changes are
 * seen sooner), as an operator sets them on a crowded node. A replica that misses its renew deadline exits, as
 * designed (a Deployment would start it again): with 10 s and 7 s (2026-11-27), then with the defaults and 1,500
 * Clusters beside a Cluster API file's Docker machines booting (load 21, 2026-11-29), one did, and every case after
 * it failed.
 */
const LEASE_MS = 30_000;
const RENEW_DEADLINE_MS = 20_000;
const folder = mkdtempSync(join(tmpdir(), "sharding-"));

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let proxy: TcpProxyProcess;
const replicas = new Map<string, ShardedReplica>();
/** When each replica's process was killed or exited (`name/pid`), for calls cut off in the middle. */
const endedAt: Record<string, number> = {};
/** Replicas the test itself kills or cuts off: their exit is the case's, not one to start again. */
const endedByTheTest = new Set<string>();
/** How often a replica may be started again after losing its Lease (a replica that keeps losing it fails the file). */
const RESTARTS = 3;
const restarts = new Map<string, number>();

async function startReplica(name: string, kubeconfig = controlPlane.kubeconfigPath): Promise<ShardedReplica> {
  const replica = await startShardedReplica({
    name,
    kubeconfig,
    folder,
    provider: "shards",
    leaseMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: 1_000,
  });
  const pid = replica.child.pid;
  replica.child.once("exit", () => {
    endedAt[`${name}/${pid}`] ??= replica.exitedAt ?? Date.now();
    if (!endedByTheTest.has(name)) startAgainAfterLostLease(replica, kubeconfig);
  });
  replicas.set(name, replica);
  return replica;
}

/**
 * A replica that missed its renew deadline (a starved process on a loaded machine) exits, as designed, and its
 * Deployment starts it again: so does the test, saying so. Any other exit is left as it is: the cases then fail
 * naming it (metricOf tells how it ended and its last lines).
 */
function startAgainAfterLostLease(replica: ShardedReplica, kubeconfig: string): void {
  const tail = replica.output().split("\n").slice(-5).join("\n");
  const times = restarts.get(replica.name) ?? 0;
  if (!replica.output().includes("membership lease lost") || times >= RESTARTS) {
    console.log(`replica ${replica.name} exited by itself (not started again); its last output:\n${tail}`);
    return;
  }
  restarts.set(replica.name, times + 1);
  console.log(
    `replica ${replica.name} lost its membership lease and exited; started again as its Deployment would (${times + 1}/${RESTARTS})`,
  );
  startReplica(replica.name, kubeconfig).catch((error: unknown) =>
    console.log(`replica ${replica.name} could not be started again: ${String(error)}`),
  );
}

const owned = (replica: ShardedReplica) =>
  metricOf(replica, "openmcp_engine_shard_owned_objects", 'controller="cluster"');
const members = shardMembersOf;
const ready = (replica: ShardedReplica) =>
  metricOf(replica, "openmcp_engine_objects", 'kind="Cluster",phase="Ready"');
const get = (name: string) => replicas.get(name) as ShardedReplica;
const journal = (): BackendCall[] =>
  readJournals([...replicas.keys()].map((name) => journalOf(folder, name)));
/** The Clusters not Ready yet, each as `name: phase`. */
async function notReady(): Promise<string[]> {
  const list = (await custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE })) as {
    items: Array<{ metadata: { name: string }; status?: { phase?: string } }>;
  };
  return list.items
    .filter((cluster) => cluster.status?.phase !== "Ready")
    .map((cluster) => `${cluster.metadata.name}: ${cluster.status?.phase ?? "no status"}`);
}
const createClustersNamed = (prefix: string, count: number) =>
  createClusters(custom, { namespace: NAMESPACE, provider: "shards", prefix, count });

beforeAll(async () => {
  ({ controlPlane, custom } = await startShardedWorld(NAMESPACE));
  const server = new URL(controlPlane.kubeConfig.getCurrentCluster()?.server ?? "");
  proxy = await startTcpProxyProcess({ host: server.hostname, port: Number(server.port) });
  await startReplica("a");
  await startReplica("b");
  // c reaches the API server only through the proxy, so the test can cut it off alone.
  await startReplica(
    "c",
    writeKubeconfigThroughProxy(controlPlane.kubeconfigPath, proxy, join(folder, "c.kubeconfig")),
  );
}, 120_000);

afterAll(async () => {
  for (const name of replicas.keys()) endedByTheTest.add(name);
  for (const replica of replicas.values()) if (replica.exitedAt === undefined) replica.child.kill("SIGKILL");
  await proxy?.stop();
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("three sharded replicas as processes", () => {
  it("split 900 Clusters about evenly: each owns 300 ± 20 %", async () => {
    await eventually(
      async () => {
        for (const name of ["a", "b", "c"]) expect(await members(get(name))).toEqual(["a", "b", "c"]);
      },
      { what: "every replica to see all three", timeoutMs: 120_000 },
    );
    await createClustersNamed("c", CLUSTERS);
    const shares = await eventually(
      async () => {
        const counts = await Promise.all(["a", "b", "c"].map((name) => owned(get(name))));
        expect(counts.reduce((sum, count) => sum + count, 0)).toBe(CLUSTERS);
        return counts;
      },
      // Waiting, not timing: the run's first files share the machine with the heavy assets' build.
      { what: "the replicas' owned Clusters to add up to all", timeoutMs: 300_000 },
    );
    for (const share of shares) expect(Math.abs(share - CLUSTERS / 3)).toBeLessThanOrEqual(CLUSTERS / 3 / 5);
  }, 600_000);

  it("start again a replica frozen past its renew deadline (a starved process): it stops, exits, and rejoins the ring", async () => {
    const frozen = get("b");
    const pid = frozen.child.pid as number;
    process.kill(pid, "SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, RENEW_DEADLINE_MS + 5_000));
    process.kill(pid, "SIGCONT");
    await eventually(() => expect(frozen.exitedAt).toBeDefined(), {
      what: "the frozen replica to exit once it runs again",
      timeoutMs: 60_000,
    });
    expect(frozen.output()).toContain("membership lease lost");
    await eventually(
      async () => {
        expect(get("b").child.pid).not.toBe(pid);
        for (const name of ["a", "b", "c"]) expect(await members(get(name))).toEqual(["a", "b", "c"]);
      },
      { what: "b started again and seen by all three", timeoutMs: 120_000 },
    );
  }, 300_000);

  it("take over the Clusters of a replica killed with kill -9 mid-provisioning, none of its Clusters worked on again before its Lease expired", async () => {
    await eventually(async () => expect(await ready(get("a"))).toBeGreaterThanOrEqual(300), {
      what: "some Clusters Ready",
      timeoutMs: 240_000,
    });
    const b = get("b");
    // The killed process's own identity (a b started again after losing its Lease is another member).
    const bIdentity = await shardIdentityOf(b);
    endedByTheTest.add("b");
    b.child.kill("SIGKILL");
    const killedAt = Date.now();
    endedAt[`b/${b.child.pid}`] = killedAt;
    // b's Lease expires a lease duration after b last renewed it, which on a loaded machine may be seconds before the
    // kill (renewals due every second come late). Read at once: the others remove it when they drop b. (A renewal
    // still in flight may land after this read: then the bound below is that much looser, never wrongly strict.)
    const bLease = (
      await controlPlane.kubeConfig
        .makeApiClient(CoordinationV1Api)
        .listNamespacedLease({ namespace: "default" })
    ).items.find((lease) => lease.spec?.holderIdentity === bIdentity);
    expect(bLease?.spec?.renewTime, `b's Lease (${bIdentity}), read right after the kill`).toBeDefined();
    const renewed = new Date(bLease?.spec?.renewTime ?? killedAt).getTime();
    const started = Date.now();
    await eventually(
      async () => {
        for (const name of ["a", "c"]) expect(await members(get(name))).toEqual(["a", "c"]);
      },
      { what: "a and c to drop b", timeoutMs: 6 * LEASE_MS },
    );
    // b's record unchanged for a lease duration, seen at the next list (1 s retry period): said, not asserted (on a
    // loaded machine the others' lists come late; what must hold whatever the load is asserted below).
    console.log(
      `a and c dropped b ${Date.now() - started} ms after kill -9, b's Lease last renewed ${killedAt - renewed} ms before it (lease duration ${LEASE_MS} ms)`,
    );
    // Nothing of b's was worked on again before its Lease expired. b's: the Clusters b owned by the members it had
    // published in its Lease that it works by (acknowledged). No peer owns those by its own view while b is live to
    // it, whatever changed before (b may have let others' keys go, or been left by them after a missed renewal:
    // what b had let go of was rightly theirs at the kill, even if they reached it only after).
    const bAcknowledged = acknowledgedIn(bLease as unknown as Lease);
    expect(bAcknowledged, "the members b worked by").toContain(bIdentity);
    const earliest = renewed + LEASE_MS;
    const names = new Set(journal().flatMap((call) => (call.clusterName ? [call.clusterName] : [])));
    const bClusters = new Set([...names].filter((name) => ownerOf(name, bAcknowledged) === bIdentity));
    expect(bClusters.size, "Clusters b owned when it was killed").toBeGreaterThan(0);
    const early = journal().filter(
      (call) =>
        call.replica !== "b" &&
        bClusters.has(call.clusterName ?? "") &&
        call.start > killedAt &&
        call.start < earliest,
    );
    expect(early).toEqual([]);
  }, 360_000);

  it("stop a replica cut off from the API server before its Lease expires; the others take over after", async () => {
    const c = get("c");
    endedByTheTest.add("c");
    await proxy.block();
    const blockedAt = Date.now();
    // c cannot renew: it stops working at the renew deadline and exits, before its Lease can expire.
    await eventually(
      () => {
        if (c.exitedAt !== undefined) return;
        const tail = c.output().split("\n").slice(-15).join("\n");
        throw new Error(`c still runs ${Date.now() - blockedAt} ms after the cut; its last output:\n${tail}`);
      },
      // It stops working at the deadline whatever the load (asserted below); the exit may lag on a busy machine.
      { what: "the cut-off replica to exit", timeoutMs: 6 * LEASE_MS },
    );
    expect(c.output()).toContain("membership lease lost");
    const cCalls = journal().filter((call) => call.replica === "c");
    const lastStart = Math.max(...cCalls.map((call) => call.start));
    expect(lastStart).toBeLessThan(blockedAt + RENEW_DEADLINE_MS + 1_500);
    const exitedAfterMs = (c.exitedAt ?? Date.now()) - blockedAt;
    await eventually(async () => expect(await members(get("a"))).toEqual(["a"]), {
      what: "a to drop c",
      timeoutMs: 3 * LEASE_MS,
    });
    // Once (CI run 43) this case took 302 s instead of about 31, passing: which of its waits took it is not known.
    console.log(
      `c exited ${exitedAfterMs} ms after the cut; a dropped c ${Date.now() - blockedAt} ms after it (lease duration ${LEASE_MS} ms)`,
    );
    // a works on c's Clusters only after c's last call ended.
    const cClusters = new Set(cCalls.map((call) => call.cluster));
    const cEnd = Math.max(...cCalls.map((call) => call.end ?? endedAt[`c/${call.pid}`] ?? c.exitedAt ?? 0));
    const aOnC = journal().filter(
      (call) => call.replica === "a" && cClusters.has(call.cluster) && call.start > blockedAt,
    );
    for (const call of aOnC) expect(call.start).toBeGreaterThan(cEnd);
    await proxy.unblock();
    // Beyond its waits' budgets (6 and 3 lease durations, at the machine's pace: up to three times slower), so that
    // a wait that fails says which and why (c's last output) instead of the test's timeout saying nothing (run 40).
  }, 1_000_000);

  it("let a new replica take its share while the others go on working", async () => {
    const more = createClustersNamed("d", 300);
    const joinedAt = Date.now();
    const d = await startReplica("d");
    await eventually(async () => expect(await members(d)).toEqual(["a", "d"]), {
      what: "d to join a",
      timeoutMs: 60_000,
    });
    await more;
    const firstOfD = await eventually(
      () => {
        const calls = journal().filter((call) => call.replica === "d");
        expect(calls.length).toBeGreaterThan(0);
        return Math.min(...calls.map((call) => call.start));
      },
      { what: "d's first backend call", timeoutMs: 60_000 },
    );
    // a kept working while d joined: it made backend calls between d's start and d's first call.
    const aMeanwhile = journal().filter(
      (call) => call.replica === "a" && call.start >= joinedAt && call.start <= firstOfD,
    );
    expect(aMeanwhile.length).toBeGreaterThan(0);
    await eventually(
      async () => {
        const counts = await Promise.all([owned(get("a")), owned(d)]);
        const cached = await Promise.all([cachedOf(get("a"), "Cluster"), cachedOf(d, "Cluster")]);
        expect(counts[0] + counts[1], `owned by a and d (holding ${cached.join(" and ")} Clusters)`).toBe(
          CLUSTERS + 300,
        );
        for (const count of counts) expect(count).toBeGreaterThan((CLUSTERS + 300) * 0.3);
      },
      { what: "a and d to split the Clusters", timeoutMs: 60_000 },
    );
  }, 240_000);

  it("end with every Cluster Ready, each created at the backend once, and no Cluster ever worked on by two replicas at once", async () => {
    // Read from the API server, not from a replica's cache, so that a Cluster left behind is named.
    await eventually(async () => expect(await notReady()).toEqual([]), {
      what: "every Cluster Ready",
      timeoutMs: 300_000,
      intervalMs: 2_000,
    });
    const calls = journal();
    // Created at the backend exactly once each: its own log of creates that made a cluster (a replica
    // taking over a Cluster whose status never said so orders it again, and the backend sees it exists).
    const created = clustersCreated(folder);
    expect(created).toHaveLength(CLUSTERS + 300);
    expect(new Set(created).size).toBe(CLUSTERS + 300);
    expect(overlappingCalls(calls, { killedAt: endedAt })).toEqual([]);
    // Every replica did part of the work.
    for (const name of ["a", "b", "c", "d"]) expect(calls.some((call) => call.replica === name)).toBe(true);
  }, 360_000);
});
