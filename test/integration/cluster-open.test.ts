/**
 * The Cluster kind's `open` decides and reads; it never writes (issue: `open` took a moved Cluster over and claimed
 * pool members itself, past the machine and the controller's writer). Run on a real API server against a
 * KubeConfig that counts every request other than a GET, for a Cluster moved here with its hand-over Secret and for
 * a new Cluster a warm pool can serve; then the machine's own reconcile does both, through the writer.
 */
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { type ClusterPool, poolMemberTarget } from "../../src/api/cluster-pool.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import {
  HANDOVER_ANNOTATION,
  HANDOVER_OWNER_LABEL,
  HANDOVER_STATE_ANNOTATION,
  handoverSecretName,
} from "../../src/api/move.ts";
import { Patch } from "../../src/machines/shared/json-patch.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { AdminAccessCache } from "../../src/runtime/admin-access-cache.ts";
import { interceptRequests } from "../../src/runtime/api-server/connection-reuse.ts";
import * as patching from "../../src/runtime/api-server/patch-object.ts";
import { Backends } from "../../src/runtime/backends.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { InformerSet } from "../../src/runtime/informers.ts";
import { clusterKind, DEFAULT_CLUSTER_TIMING } from "../../src/runtime/kinds/cluster/kind.ts";
import { PROFILE_CACHES } from "../../src/runtime/kinds/provider-config/caches.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { MachineController } from "../../src/runtime/machine-controller.ts";
import { cachesOf, type KindContext } from "../../src/runtime/machine-kind.ts";
import { aClusterPool, aProviderConfig } from "../support/builders.ts";
import { startWorld, type World } from "../support/world.ts";

const NS = "clusters";
let world: World;
const backend = new SimulatedBackend({ provisionDelayMs: 0, deleteDelayMs: 0 });
/** Every request of the engine's KubeConfig that is no GET: `METHOD path`. */
const writes: string[] = [];
let kubeConfig: KubeConfig;
let informers: InformerSet;
let context: KindContext;

beforeAll(async () => {
  world = await startWorld({ backend, engine: false });
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "small", supportedVersions: [{ version: "1.33.3" }] }),
  });
  // A warm pool with one idle Ready member, at the backend and in the pool's status.
  await backend.pools.createMember(
    { id: "pool-a", version: "1.33.3", pool: "warm" },
    poolMemberTarget("pool-a", { name: "small" }),
  );
  const pool = (await world.custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: aClusterPool("warm", { providerConfig: "small", idle: 1 }),
  })) as ClusterPool;
  await patching.patchObject(
    world.controlPlane.kubeConfig,
    { ...RESOURCES.ClusterPool, name: "warm", resourceVersion: pool.metadata.resourceVersion ?? "" },
    [Patch.add(["status"], { members: [{ id: "pool-a", version: "1.33.3", phase: "Ready" }] })],
    "status",
  );

  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(world.controlPlane.kubeconfigPath);
  interceptRequests(kubeConfig, (dispatch) => (options, handler) => {
    if (options.method.toUpperCase() !== "GET") writes.push(`${options.method} ${options.path}`);
    return dispatch(options, handler);
  });
  informers = new InformerSet(kubeConfig, silentLogger, systemClock);
  const backends = new Backends(backend, (name) => informers.of(PROFILE_CACHES.providerConfigs).get(name));
  const own = {
    kubeConfig,
    informers,
    providerName: world.provider,
    environment: "test",
    backend: backends.router,
    backends,
    adminAccess: new AdminAccessCache({ backend: backends.router, clock: systemClock }),
    clock: systemClock,
    log: silentLogger,
    timing: DEFAULT_CLUSTER_TIMING,
    state: undefined,
  };
  context = { ...own, state: clusterKind.state?.(own, { pools: true }) } as KindContext;
  for (const cache of cachesOf(clusterKind as never)) informers.of(cache);
  await informers.start();
}, 120_000);

afterAll(async () => {
  informers?.stop();
  await world?.stop();
});

/** The Cluster as the cache holds it once it shows `name`. */
async function cached(name: string): Promise<Cluster> {
  for (let i = 0; i < 100; i++) {
    const cluster = informers.of(clusterKind.cache).get(`${NS}/${name}`);
    if (cluster) return cluster;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Cluster ${name} never reached the cache`);
}

describe("the Cluster kind's open", () => {
  it("writes nothing for a Cluster moved here, nor for a new Cluster a warm pool can serve", async () => {
    // A moved Cluster, resumed: its hand-over annotation names a `ready` Secret made for it.
    const moved = await world.createCluster(
      "moved",
      {},
      {
        annotations: { [HANDOVER_ANNOTATION]: handoverSecretName("moved") },
      },
    );
    await world.controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: {
          name: handoverSecretName("moved"),
          labels: { [HANDOVER_OWNER_LABEL]: moved.metadata.uid ?? "" },
          annotations: { [HANDOVER_STATE_ANNOTATION]: "ready" },
        },
        stringData: {},
      },
    });
    await world.createCluster("pooled");

    const opened = [];
    for (const name of ["moved", "pooled"]) {
      const work = await clusterKind.open(await cached(name), context as never);
      // A look reads too, never writes.
      await work?.observe(await cached(name));
      opened.push(work);
    }
    expect(writes).toEqual([]);
    // Both are the machine's to step: it takes the one over and claims a member for the other.
    expect(opened.every((work) => work !== undefined)).toBe(true);
  });

  it("leaves the take-over and the claim to the machine, whose commands write through the controller's writer", async () => {
    const through: string[] = [];
    const controller = new MachineController({
      kind: clusterKind as never,
      context,
      recordEvents: false,
      writer: {
        patch: (target, operations, subresource) => {
          through.push(`patch ${target.plural}/${target.name}${subresource ? `/${subresource}` : ""}`);
          return patching.patchObject(kubeConfig, target, operations, subresource);
        },
        remove: (target) => {
          through.push(`remove ${target.plural}/${target.name}`);
          return patching.removeObject(kubeConfig, target);
        },
        record: () => {},
      },
    });
    for (const name of ["moved", "pooled"]) {
      for (let i = 0; i < 5; i++) {
        await controller.reconcile(`${NS}/${name}`).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(through).toContain(`remove secrets/${handoverSecretName("moved")}`);
    expect(through).toContain("patch clusterpools/warm/status");
    const moved = await world.readCluster("moved");
    expect(moved?.metadata.annotations?.[HANDOVER_ANNOTATION]).toBeUndefined();
    expect(moved?.status?.providerStatus?.state).not.toBe("takingOver");
    const pooled = await world.readCluster("pooled");
    expect(pooled?.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]).toBe("warm/pool-a");
  });
});
