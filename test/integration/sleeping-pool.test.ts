/**
 * A sleeping warm pool on a real API server (the simulated backend: its delays stand for a backend's, processes are
 * not the point here; `local-sleeping-pool.test.ts` has real ones): a pool of 2 with 1 awake keeps one member
 * Ready and one hibernated; the first Cluster is bound to the awake one at once, the second to the sleeping one,
 * which its machine wakes (Ready only once awake); the pool wakes and sends to sleep as it refills, wakes all when
 * `spec.awake` goes, and the CRD refuses more awake than idle. On a backend that cannot sleep, the pool keeps every
 * member awake and says why. (A Cluster never Ready on a sleeping cluster, and its
 * own wake of a member it took asleep, are the pure tests' and the pool-binding property test's.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { parsePoolMemberAnnotation } from "../../src/machines/cluster-pool/claim.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { aClusterPool, aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

/** A made cluster takes longer than a wake, as on every real backend. */
const PROVISION_MS = 1_500;
const WAKE_MS = 800;
const backend = new SimulatedBackend({
  provisionDelayMs: PROVISION_MS,
  deleteDelayMs: 0,
  hibernateDelayMs: 200,
  wakeDelayMs: WAKE_MS,
});
let world: World;

const readPool = () =>
  world.custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: "sleepy" }) as Promise<ClusterPool>;

/** The pool settled with `awake` idle members awake and `asleep` asleep, none being made, bound or woken. */
const poolAt = (awake: number, asleep: number) =>
  eventually(
    async () =>
      satisfying(
        await readPool(),
        (pool) =>
          pool.status?.idle === awake &&
          (pool.status.asleep ?? 0) === asleep &&
          pool.status.refilling === 0 &&
          pool.status.binding === 0 &&
          (pool.status.hibernating ?? 0) === 0 &&
          (pool.status.waking ?? 0) === 0,
      ),
    { what: `pool with ${awake} awake and ${asleep} asleep`, timeoutMs: 20_000 },
  );

const memberOf = (cluster: Cluster) =>
  parsePoolMemberAnnotation(cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] ?? "").member;

/** The ProviderConfig `small` (offering 1.33.3) on `on`'s API server, the pools' provider config. */
const offerSmall = (on: World) =>
  on.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "small", supportedVersions: [{ version: "1.33.3" }] }),
  });

/** Creates a Cluster and measures, by polling every 20 ms, how long until it says Ready. */
async function timeToReady(name: string): Promise<{ ms: number; cluster: Cluster }> {
  const started = performance.now();
  await world.createCluster(name);
  const cluster = (await world.waitFor(name, isReady, 20_000)) as Cluster;
  return { ms: Math.round(performance.now() - started), cluster };
}

beforeAll(async () => {
  world = await startWorld({
    backend,
    engine: false,
    timing: { pollMs: 100, retryMs: 200, resyncMs: 60_000 },
  });
  await world.startEngine({ kindSettings: { Cluster: { pools: true } } });
  await offerSmall(world);
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

describe("the ClusterPool CRD", () => {
  it("refuses more awake than idle", async () => {
    const refused = await world.custom
      .createClusterCustomObject({
        ...RESOURCES.ClusterPool,
        body: aClusterPool("bad", { providerConfig: "small", idle: 1, awake: 2 }),
      })
      .catch((error: { body?: string }) => error);
    expect(String((refused as { body?: string }).body)).toContain("awake counts idle clusters");
  });
});

describe("a sleeping pool of 2 with 1 awake", { timeout: 60_000 }, () => {
  let asleepAtFirst = "";

  it("keeps one member Ready and puts the other to sleep at the backend", async () => {
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ClusterPool,
      body: aClusterPool("sleepy", { providerConfig: "small", idle: 2, awake: 1 }),
    });
    const pool = await poolAt(1, 1);
    const members = pool.status?.members ?? [];
    expect(members.map((member) => member.phase).sort()).toEqual(["Hibernated", "Ready"]);
    asleepAtFirst = members.find((member) => member.phase === "Hibernated")?.id ?? "";
    expect(world.calls.filter((c) => c.method === "hibernate").map((c) => c.uid)).toEqual([asleepAtFirst]);
    expect(pool.status?.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "True",
      reason: "Hibernated",
    });
    // Its ProviderConfig shows it too.
    await eventually(
      async () =>
        satisfying(
          (await world.custom.getClusterCustomObject({
            ...RESOURCES.ProviderConfig,
            name: "small",
          })) as ProviderConfig,
          (config) => config.status?.pools?.sleepy?.asleep === 1 && config.status.pools.sleepy.idle === 1,
        ),
      { what: "ProviderConfig small to show pool sleepy with 1 awake, 1 asleep" },
    );
  });

  it("binds the first Cluster to the awake member at once, and wakes the sleeping one for the second", async () => {
    const first = await timeToReady("first");
    const second = await timeToReady("second");
    console.log(
      `sleeping pool (simulated, wake ${WAKE_MS} ms, make ${PROVISION_MS} ms): first Cluster Ready in ${first.ms} ms (awake member), second in ${second.ms} ms (woken member)`,
    );
    expect(memberOf(first.cluster)).not.toBe(asleepAtFirst);
    expect(memberOf(first.cluster)).not.toBe("");
    expect(memberOf(second.cluster)).toBe(asleepAtFirst);
    // The second's member was woken: by the pool, to keep one awake once the first took the awake one, or by the
    // second's machine, if it claimed the member still asleep (both are idempotent); none for the first.
    const wakes = world.calls.filter(
      (c) => c.method === "wake" && (c.uid === asleepAtFirst || c.uid === second.cluster.metadata.uid),
    );
    expect(wakes.length).toBeGreaterThan(0);
    expect(world.callsAbout("wake", `${world.namespace}/first`)).toBe(0);
    // The metrics tell the two apart: a hit and a woken member; the pool's sleeping members by state.
    const metrics = await world.engine.metrics.registry.metrics();
    expect(metrics).toContain('openmcp_engine_pool_clusters_total{pool="sleepy",result="hit"} 1');
    expect(metrics).toContain('openmcp_engine_pool_clusters_total{pool="sleepy",result="woken"} 1');
    expect(metrics).toMatch(/openmcp_engine_cluster_time_to_ready_seconds_count\{source="woken"\} 1/);
    expect(metrics).toMatch(/openmcp_engine_pool_clusters\{pool="sleepy",state="hibernated"\} \d/);
    // Back to 1 awake and 1 asleep, with new members.
    const refilled = await poolAt(1, 1);
    const ids = refilled.status?.members?.map((member) => member.id) ?? [];
    expect(ids).not.toContain(memberOf(first.cluster));
    expect(ids).not.toContain(asleepAtFirst);
  });

  it("wakes every member once spec.awake is removed, and says so", async () => {
    await world.custom.patchClusterCustomObject({
      ...RESOURCES.ClusterPool,
      name: "sleepy",
      body: [{ op: "remove", path: "/spec/awake" }],
    });
    const pool = await poolAt(2, 0);
    expect(pool.status?.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "True",
      reason: "Awake",
    });
  });

  it("leaves nothing at the backend once the Clusters and the pool are deleted", async () => {
    for (const name of ["first", "second"]) await world.remove(RESOURCES.Cluster, name);
    await world.custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "sleepy" });
    await eventually(async () => satisfying(backend.size, (size) => size === 0), {
      what: "no cluster left at the backend",
      timeoutMs: 20_000,
    });
  });
});

describe("a sleeping pool on a backend that cannot sleep", { timeout: 60_000 }, () => {
  /** The simulated backend without the optional pair (contract 1.6), as a backend built before it. */
  const sleepless = new Proxy(new SimulatedBackend({ provisionDelayMs: 0, deleteDelayMs: 0 }), {
    get: (target, property) =>
      property === "hibernate" || property === "wake" ? undefined : Reflect.get(target, property),
  }) as ClusterBackend;
  let other: World;

  beforeAll(async () => {
    other = await startWorld({ backend: sleepless, engine: { kindSettings: { Cluster: { pools: true } } } });
    await offerSmall(other);
  }, 60_000);

  afterAll(async () => {
    await other?.stop();
  });

  it("keeps every member awake and says so in the Hibernation condition", async () => {
    await other.custom.createClusterCustomObject({
      ...RESOURCES.ClusterPool,
      body: aClusterPool("sleepy", { providerConfig: "small", idle: 2, awake: 1 }),
    });
    const pool = (await eventually(
      async () =>
        satisfying(
          (await other.custom.getClusterCustomObject({
            ...RESOURCES.ClusterPool,
            name: "sleepy",
          })) as ClusterPool,
          (p) => p.status?.idle === 2,
        ),
      { what: "pool sleepy with 2 awake", timeoutMs: 20_000 },
    )) as ClusterPool;
    expect(pool.status?.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "False",
      reason: "HibernationNotOffered",
    });
    expect(pool.status?.asleep).toBe(0);
    expect(other.calls.filter((c) => c.method === "hibernate")).toEqual([]);
  });
});
