/**
 * Sharded mode as operators run it: replicas as separate `run --sharding` processes on a real API server,
 * one simulated backend behind them all (a short delay), every backend call journaled with the replica
 * that made it. 3,000 Clusters split evenly; a replica killed with kill -9 mid-provisioning, another cut
 * off from the API server (a partition, through a TCP proxy), a new one joining; in the end every Cluster
 * Ready, each created at the backend exactly once, and no Cluster ever worked on by two replicas at once.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { freePorts } from "../../src/controlplane/free-ports.ts";
import { installingCrds } from "../../src/runtime/install-crds.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { overlappingCalls } from "../support/journal-checks.ts";
import { type BackendCall, readJournals } from "../support/journaling-backend.ts";
import { startEngineCli } from "../support/processes.ts";
import { writeKubeconfigThroughProxy } from "../support/proxied-kubeconfig.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const NAMESPACE = "fleet";
const CLUSTERS = 3_000;
/** Short membership timings, so takeovers happen within the test (the defaults are 15 s, 10 s, 2 s). */
const LEASE_MS = 10_000;
const RENEW_DEADLINE_MS = 7_000;
const JOURNALING_BACKEND = join(import.meta.dirname, "..", "support", "journaling-backend.ts");
const folder = mkdtempSync(join(tmpdir(), "sharding-"));

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  readonly metricsPort: number;
  readonly output: () => string;
  /** When the process ended (ms since the epoch), once it has. */
  exitedAt?: number;
}

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let proxy: TcpProxy;
const replicas = new Map<string, Replica>();
/** When a replica was killed or exited, for calls cut off in the middle. */
const endedAt: Record<string, number> = {};

async function startReplica(name: string, kubeconfig = controlPlane.kubeconfigPath): Promise<Replica> {
  const [metricsPort] = (await freePorts(1)) as [number];
  const { child, output } = startEngineCli(
    [
      "run",
      "--provider-name=shards",
      "--environment=test",
      `--kubeconfig=${kubeconfig}`,
      `--state-dir=${join(folder, "state")}`,
      `--backend=${JOURNALING_BACKEND}`,
      `--backend-option=journal=${join(folder, `${name}.jsonl`)}`,
      `--backend-option=replica=${name}`,
      "--backend-option=delay=500ms",
      "--sharding",
      "--leader-election-namespace=default",
      `--lease-duration=${LEASE_MS / 1_000}s`,
      `--renew-deadline=${RENEW_DEADLINE_MS / 1_000}s`,
      "--retry-period=1s",
      "--concurrency=8",
      "--no-schedule",
      "--log-level=warn",
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      "--health-probe-bind-address=0",
    ],
    { POD_NAME: name },
  ); // the replica's identity: its name and a random suffix
  const replica: Replica = { name, child, metricsPort, output };
  child.once("exit", () => {
    replica.exitedAt = Date.now();
    endedAt[name] ??= replica.exitedAt;
  });
  replicas.set(name, replica);
  return replica;
}

/** One sample of the replica's /metrics (0 when absent). */
async function metric(replica: Replica, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

const owned = (replica: Replica) =>
  metric(replica, "openmcp_engine_shard_owned_objects", 'controller="cluster"');
const members = async (replica: Replica) => {
  const text = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith("openmcp_engine_shard_members{"))
    .map((l) => /identity="([^"]+)"/.exec(l)?.[1] ?? "")
    .map((identity) => identity.replace(/_[0-9a-f]{8}$/, "")) // run adds a random suffix per process
    .sort();
};
const ready = (replica: Replica) => metric(replica, "openmcp_engine_objects", 'kind="Cluster",phase="Ready"');
const get = (name: string) => replicas.get(name) as Replica;
const journal = (): BackendCall[] =>
  readJournals([...replicas.keys()].map((name) => join(folder, `${name}.jsonl`)));

async function createClusters(prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const name = `${prefix}-${next++}`;
        await custom.createNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: NAMESPACE,
          body: aCluster({ name, namespace: NAMESPACE, profile: "test.shards.sim" }),
        });
      }
    }),
  );
}

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  const server = new URL(controlPlane.kubeConfig.getCurrentCluster()?.server ?? "");
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
  await startReplica("a");
  await startReplica("b");
  // c reaches the API server only through the proxy, so the test can cut it off alone.
  await startReplica(
    "c",
    writeKubeconfigThroughProxy(controlPlane.kubeconfigPath, proxy, join(folder, "c.kubeconfig")),
  );
}, 120_000);

afterAll(async () => {
  for (const replica of replicas.values()) if (replica.exitedAt === undefined) replica.child.kill("SIGKILL");
  await proxy?.stop();
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("three sharded replicas as processes", () => {
  it("split 3,000 Clusters about evenly: each owns 1,000 ± 20 %", async () => {
    await eventually(
      async () => {
        for (const name of ["a", "b", "c"]) expect(await members(get(name))).toEqual(["a", "b", "c"]);
      },
      { what: "every replica to see all three", timeoutMs: 60_000 },
    );
    await createClusters("c", CLUSTERS);
    const shares = await eventually(
      async () => {
        const counts = await Promise.all(["a", "b", "c"].map((name) => owned(get(name))));
        expect(counts.reduce((sum, count) => sum + count, 0)).toBe(CLUSTERS);
        return counts;
      },
      { what: "the replicas' owned Clusters to add up to all", timeoutMs: 60_000 },
    );
    for (const share of shares) expect(Math.abs(share - 1_000)).toBeLessThanOrEqual(200);
  }, 300_000);

  it("take over the Clusters of a replica killed with kill -9 mid-provisioning, within the lease duration", async () => {
    await eventually(async () => expect(await ready(get("a"))).toBeGreaterThanOrEqual(300), {
      what: "some Clusters Ready",
      timeoutMs: 240_000,
    });
    const b = get("b");
    b.child.kill("SIGKILL");
    const killedAt = Date.now();
    endedAt.b = killedAt;
    const started = Date.now();
    await eventually(
      async () => {
        for (const name of ["a", "c"]) expect(await members(get(name))).toEqual(["a", "c"]);
      },
      { what: "a and c to drop b", timeoutMs: 3 * LEASE_MS },
    );
    const tookMs = Date.now() - started;
    // b's record unchanged for a lease duration, seen at the next list (1 s retry period) — plus slack for a busy machine.
    expect(tookMs).toBeLessThan(LEASE_MS + 5_000);
    // Nothing of b's was worked on again before its Lease expired.
    const earliest = killedAt + LEASE_MS - 1_000;
    const bClusters = new Set(
      journal()
        .filter((call) => call.replica === "b")
        .map((call) => call.cluster),
    );
    const early = journal().filter(
      (call) =>
        call.replica !== "b" && bClusters.has(call.cluster) && call.start > killedAt && call.start < earliest,
    );
    expect(early).toEqual([]);
  }, 360_000);

  it("stop a replica cut off from the API server before its Lease expires; the others take over after", async () => {
    const c = get("c");
    proxy.block();
    const blockedAt = Date.now();
    // c cannot renew: it stops working at the renew deadline and exits, before its Lease can expire.
    await eventually(() => expect(c.exitedAt).toBeDefined(), {
      what: "the cut-off replica to exit",
      timeoutMs: 3 * LEASE_MS,
    });
    expect(c.output()).toContain("membership lease lost");
    const cCalls = journal().filter((call) => call.replica === "c");
    const lastStart = Math.max(...cCalls.map((call) => call.start));
    expect(lastStart).toBeLessThan(blockedAt + RENEW_DEADLINE_MS + 1_500);
    await eventually(async () => expect(await members(get("a"))).toEqual(["a"]), {
      what: "a to drop c",
      timeoutMs: 3 * LEASE_MS,
    });
    // a works on c's Clusters only after c's last call ended.
    const cClusters = new Set(cCalls.map((call) => call.cluster));
    const cEnd = Math.max(...cCalls.map((call) => call.end ?? c.exitedAt ?? 0));
    const aOnC = journal().filter(
      (call) => call.replica === "a" && cClusters.has(call.cluster) && call.start > blockedAt,
    );
    for (const call of aOnC) expect(call.start).toBeGreaterThan(cEnd);
    proxy.unblock();
  }, 180_000);

  it("let a new replica take its share while the others go on working", async () => {
    const more = createClusters("d", 300);
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
        expect(counts[0] + counts[1]).toBe(CLUSTERS + 300);
        for (const count of counts) expect(count).toBeGreaterThan((CLUSTERS + 300) * 0.3);
      },
      { what: "a and d to split the Clusters", timeoutMs: 60_000 },
    );
  }, 240_000);

  it("end with every Cluster Ready, each created at the backend once, and no Cluster ever worked on by two replicas at once", async () => {
    await eventually(async () => expect(await ready(get("a"))).toBe(CLUSTERS + 300), {
      what: "every Cluster Ready",
      timeoutMs: 300_000,
      intervalMs: 1_000,
    });
    const calls = journal();
    // Created at the backend exactly once each: its own log of creates that made a cluster (a replica
    // taking over a Cluster whose status never said so orders it again, and the backend sees it exists).
    const [world] = readdirSync(join(folder, "state"));
    const created = readFileSync(join(folder, "state", world ?? "", "created.log"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(created).toHaveLength(CLUSTERS + 300);
    expect(new Set(created).size).toBe(CLUSTERS + 300);
    expect(overlappingCalls(calls, { killedAt: endedAt })).toEqual([]);
    // Every replica did part of the work.
    for (const name of ["a", "b", "c", "d"]) expect(calls.some((call) => call.replica === name)).toBe(true);
  }, 360_000);
});
