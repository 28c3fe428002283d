/**
 * Warm pools on a real API server: a pool of 2 serves two of three Clusters created at once (Ready as fast as
 * the engine writes), the third is made as usual, the pool refills to 2; a Cluster made by our scheduler for
 * an Exclusive ClusterRequest is served from the pool as well; shrinking and deleting the pool removes idle clusters.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import { CLUSTER_FINALIZERS } from "../../src/api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { Patch } from "../../src/machines/shared/json-patch.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { mcpSchedulerConfigRead } from "../fixtures/scheduler-config.ts";
import { aClusterPool, aClusterRequest, aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

/** Long enough that a Cluster made as usual is told apart from one bound to a warm cluster. */
const PROVISION_MS = 1_500;
const NS = "clusters";
const backend = new SimulatedBackend({ provisionDelayMs: PROVISION_MS, deleteDelayMs: 0 });
let world: World;
let engineOptions: Parameters<World["startEngine"]>[0];

const readPool = () =>
  world.custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" }) as Promise<ClusterPool>;

const readConfig = () =>
  world.custom.getClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    name: "small",
  }) as Promise<ProviderConfig>;

const poolAt = (idle: number) =>
  eventually(
    async () =>
      satisfying(
        await readPool(),
        (pool) => pool.status?.idle === idle && pool.status.refilling === 0 && pool.status.binding === 0,
      ),
    {
      what: `pool warm with ${idle} idle cluster(s)`,
      timeoutMs: 20_000,
    },
  );

/** Creates a Cluster and measures, by polling every 20 ms, how long until it says Ready. */
async function timeToReady(name: string): Promise<{ name: string; ms: number; cluster: Cluster }> {
  const started = performance.now();
  await world.createCluster(name);
  const cluster = (await eventually(async () => satisfying(await world.readCluster(name), isReady), {
    what: `Cluster ${name} Ready`,
    timeoutMs: 20_000,
    intervalMs: 20,
  })) as Cluster;
  return { name, ms: Math.round(performance.now() - started), cluster };
}

beforeAll(async () => {
  world = await startWorld({
    backend,
    engine: false,
    timing: { pollMs: 100, retryMs: 200, resyncMs: 60_000 },
  });
  const schedulerConfig = mcpSchedulerConfigRead(world.profile, NS);
  engineOptions = {
    kindSettings: {
      Cluster: { pools: true },
      ClusterRequest: { schedulerConfig: { current: () => schedulerConfig, onChange: () => {} } },
    },
  };
  await world.startEngine(engineOptions);
  // The harness's profile is made from ProviderConfig "small"; with the config here the engine serves it.
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({
      name: "small",
      supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7" }],
    }),
  });
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: aClusterPool("warm", { providerConfig: "small", idle: 2 }),
  });
  await poolAt(2);
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

describe("the ClusterPool CRD", () => {
  it("refuses a maximum below idle × versions, and a change of providerConfig", async () => {
    const body = (spec: object) => ({
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: "bad" },
      spec,
    });
    const refused = await world.custom
      .createClusterCustomObject({
        ...RESOURCES.ClusterPool,
        body: body({ providerConfig: "small", idle: 2, versions: ["1.33.3", "1.32.7"], maximum: 3 }),
      })
      .catch((error: { body?: string }) => error);
    expect(String((refused as { body?: string }).body)).toContain(
      "maximum must be at least idle × the number of versions",
    );
    const moved = await world.custom
      .patchClusterCustomObject({
        ...RESOURCES.ClusterPool,
        name: "warm",
        body: [{ op: "replace", path: "/spec/providerConfig", value: "other" }],
      })
      .catch((error: { body?: string }) => error);
    expect(String((moved as { body?: string }).body)).toContain("providerConfig is immutable");
  });
});

describe("a warm pool of 2", () => {
  it("serves two of three Clusters created at once from the pool, makes the third as usual, and refills", async () => {
    const results = await Promise.all(["one", "two", "three"].map((name) => timeToReady(name)));
    const fromPool = results.filter(
      (result) => result.cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember],
    );
    const made = results.filter(
      (result) => !result.cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember],
    );
    console.log(
      `time from creation to Ready: ${results
        .map(
          (r) =>
            `${r.name} ${r.ms} ms (${r.cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] ? "pool" : "made"})`,
        )
        .join(", ")}; backend provisioning takes ${PROVISION_MS} ms`,
    );
    expect(fromPool).toHaveLength(2);
    expect(made).toHaveLength(1);
    // Each bound Cluster has a member of its own; the backend reports it as the Cluster's cluster.
    const members = new Set(
      fromPool.map((r) => r.cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]),
    );
    expect(members.size).toBe(2);
    for (const { cluster } of fromPool) {
      expect(cluster.metadata.finalizers).toContain(CLUSTER_FINALIZERS.cluster);
      expect(cluster.status?.phase).toBe("Ready");
    }
    const pool = await poolAt(2);
    expect(pool.status?.members?.some((member) => member.claimedBy)).toBe(false);
    for (const { cluster } of fromPool) {
      const id = cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]?.split("/")[1];
      expect(pool.status?.members?.map((member) => member.id)).not.toContain(id);
    }
  });

  it("is found again by a restarted engine, from the backend and the API: nothing made anew, nothing lost", async () => {
    const before = await poolAt(2);
    const made = backend.createdTotal;
    await world.engine.stop();
    await world.startEngine(engineOptions);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a few reconciles of the new engine
    const after = await poolAt(2);
    expect(after.status?.members?.map((member) => member.id).sort()).toEqual(
      before.status?.members?.map((member) => member.id).sort(),
    );
    expect(backend.createdTotal).toBe(made);
  });

  it("serves a Cluster our scheduler makes for an Exclusive ClusterRequest", async () => {
    const started = performance.now();
    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: NS,
      body: aClusterRequest({ name: "mcp-one", namespace: NS, purpose: "mcp" }),
    });
    const request = (await eventually(
      async () =>
        satisfying(
          (await world.custom.getNamespacedCustomObject({
            ...RESOURCES.ClusterRequest,
            namespace: NS,
            name: "mcp-one",
          })) as ClusterRequest,
          (r) => r.status?.phase === "Granted",
        ),
      { what: "ClusterRequest mcp-one Granted", timeoutMs: 20_000, intervalMs: 20 },
    )) as ClusterRequest;
    const name = request.status?.cluster?.name ?? "";
    const cluster = (await world.waitFor(name, isReady, 20_000)) as Cluster;
    console.log(
      `ClusterRequest mcp-one granted and its Cluster Ready ${Math.round(performance.now() - started)} ms after the request`,
    );
    expect(cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]).toMatch(/^warm\//);
    await poolAt(2);
  });

  it("deletes a bound Cluster's cluster with it, and removes idle clusters when the pool shrinks and goes", async () => {
    const bound = (await world.readCluster("one")) as Cluster;
    const viaPool = bound.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] ? "one" : "two";
    const before = backend.size;
    await world.remove(RESOURCES.Cluster, viaPool);
    await world.waitFor(viaPool, (cluster) => cluster === undefined);
    await eventually(async () => satisfying(backend.size, (size) => size === before - 1), {
      what: "its cluster gone",
    });

    await world.custom.patchClusterCustomObject({
      ...RESOURCES.ClusterPool,
      name: "warm",
      body: [{ op: "replace", path: "/spec/idle", value: 1 }],
    });
    await poolAt(1);
    await eventually(async () => satisfying(backend.size, (size) => size === before - 2), {
      what: "one idle cluster gone",
    });
    // Its ProviderConfig shows it as it is now, beside what the profile controller writes there.
    const shown = await eventually(
      async () => satisfying(await readConfig(), (config) => config.status?.pools?.warm?.idle === 1),
      { what: "ProviderConfig small to show pool warm with 1 idle" },
    );
    expect(shown.status?.pools?.warm).toMatchObject({ idle: 1, binding: 0, refilling: 0, ready: true });
    expect(shown.status?.profileName).toBe(world.profile);

    await world.custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" });
    await eventually(
      async () =>
        satisfying(
          await readPool().catch((error: { code?: number }) =>
            error.code === 404 ? undefined : Promise.reject(error),
          ),
          (pool) => pool === undefined,
        ),
      { what: "pool warm gone" },
    );
    expect(backend.size).toBe(before - 3);
    await eventually(async () => satisfying(await readConfig(), (config) => !config.status?.pools?.warm), {
      what: "pool warm's line gone from ProviderConfig small",
    });
    // A line left by a pool that went while no engine ran is taken away too.
    await world.custom.patchClusterCustomObjectStatus(
      {
        ...RESOURCES.ProviderConfig,
        name: "small",
        body: [Patch.add(["status", "pools"], { gone: { idle: 1, binding: 0, refilling: 0, ready: true } })],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    await eventually(async () => satisfying(await readConfig(), (config) => !config.status?.pools?.gone), {
      what: "the line of pool gone, which does not exist, taken away from ProviderConfig small",
    });
  });
});
