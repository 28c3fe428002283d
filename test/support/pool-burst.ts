/**
 * The warm-pool scenario of issue 37, for any backend behind an engine on a real API server: a ClusterPool of N
 * warm (2 by default), N + 1 Clusters created at once, N bound to the pool's members (the time from creation to
 * Ready printed), the last made as usual, the pool back at N with new members; then everything deleted and nothing
 * left.
 * The backend's own checks (what a member is there, what is left at the end) stay in its test file.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { expect } from "vitest";
import type { BackendFactory, ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { parsePoolMemberAnnotation } from "../../src/machines/cluster-pool/claim.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aBackendContext } from "./backend-context.ts";
import { aCluster, aTargetFor } from "./builders.ts";
import { eventually, satisfying } from "./eventually.ts";

/** Where the scenario plays. */
export interface PoolBurstWorld {
  readonly custom: CustomObjectsApi;
  readonly namespace: string;
  /** The ClusterProfile the Clusters ask for (made from the pool's ProviderConfig). */
  readonly profile: string;
  /** The ProviderConfig the pool keeps clusters of. */
  readonly providerConfig: string;
  /** How long a cluster may take to be made (a pool's fill, a made Cluster). */
  readonly patienceMs: number;
  /** The pool's idle clusters when warm: the burst is one Cluster more. */
  readonly size: number;
}

/** A world of the scenario running: its parts, to read and to stop. */
export interface RunningPoolWorld extends PoolBurstWorld {
  readonly controlPlane: ControlPlane;
  readonly backend: ClusterBackend;
  /** Everything the engine and the backend logged. */
  readonly logLines: readonly string[];
  /** Stops the engine, closes the backend, stops the API server. */
  stop(): Promise<void>;
}

/**
 * A management API server with the CRDs and the namespace, the backend `factory` made on `stateDirectory` with
 * `options`, an engine with warm pools on it, `providerConfig` (named by the world's), and a pool of `size` (2).
 */
export async function startPoolWorld(props: {
  readonly namespace: string;
  readonly profile: string;
  readonly patienceMs: number;
  readonly providerName: string;
  readonly providerConfig: ProviderConfig;
  readonly factory: BackendFactory;
  readonly stateDirectory: string;
  readonly options: Readonly<Record<string, string>>;
  /** A sleeping pool: this many of its idle clusters awake (`spec.awake`); absent, all. */
  readonly awake?: number;
  /** The pool's idle clusters (default 2). */
  readonly size?: number;
}): Promise<RunningPoolWorld> {
  const logLines: string[] = [];
  const log = (level?: "debug") =>
    createLogger({ ...(level ? { level } : {}), write: (line) => logLines.push(line) });
  const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: props.namespace } } });
  let backend: ClusterBackend | undefined;
  let engine: Engine | undefined;
  const stop = async () => {
    await engine?.stop();
    await backend?.close?.();
    await controlPlane.stop();
  };
  try {
    backend = await props.factory(aBackendContext(props.stateDirectory, props.options, { log: log() }));
    engine = new Engine({
      kubeConfig: controlPlane.kubeConfig,
      providerName: props.providerName,
      environment: "test",
      backend,
      log: log("debug"),
      kindSettings: { Cluster: { pools: true } },
    });
    await engine.start();
    await custom.createClusterCustomObject({ ...RESOURCES.ProviderConfig, body: props.providerConfig });
  } catch (error) {
    await stop(); // nothing of a half-started world left running
    throw error;
  }
  const world: RunningPoolWorld = {
    custom,
    namespace: props.namespace,
    profile: props.profile,
    providerConfig: props.providerConfig.metadata.name ?? "",
    patienceMs: props.patienceMs,
    size: props.size ?? 2,
    controlPlane,
    backend,
    logLines,
    stop,
  };
  await createPool(world, world.size, props.awake);
  return world;
}

/** One Cluster of the burst: how long it took, as read when Ready. */
export interface BurstResult {
  readonly name: string;
  readonly ms: number;
  readonly cluster: Cluster;
}

const POOL = "warm";
/** The Clusters of a burst on `world`'s pool: one more than it keeps. */
const burstNames = (world: PoolBurstWorld) => ["one", "two", "three", "four"].slice(0, world.size + 1);

/** The pool member a Cluster was bound to, if it came from the pool. */
export const poolMemberOf = (cluster: Cluster): string | undefined => {
  const annotation = cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember];
  return annotation === undefined ? undefined : parsePoolMemberAnnotation(annotation).member;
};

const orUndefined = async <T>(read: Promise<T>): Promise<T | undefined> => {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
};

const readCluster = (world: PoolBurstWorld, name: string) =>
  orUndefined(
    world.custom.getNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: world.namespace,
      name,
    }) as Promise<Cluster>,
  );

/** The world's pool, or undefined when it is gone. */
export const readPool = (world: PoolBurstWorld) =>
  orUndefined(
    world.custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: POOL }) as Promise<ClusterPool>,
  );

/** The backend's admin access to `cluster` (a Cluster of the world), as a client config. */
export async function adminOf(world: RunningPoolWorld, cluster: Cluster): Promise<KubeConfig> {
  const access = await world.backend.adminAccess(
    aTargetFor(cluster, { profile: world.profile, providerConfig: world.providerConfig }),
  );
  const admin = new KubeConfig();
  admin.loadFromString(access?.kubeconfig ?? "");
  return admin;
}

/** Makes the pool of `idle` clusters of the world's ProviderConfig (`awake` of them awake, if given). */
export async function createPool(world: PoolBurstWorld, idle: number, awake?: number): Promise<void> {
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: POOL },
      spec: { providerConfig: world.providerConfig, idle, ...(awake === undefined ? {} : { awake }) },
    },
  });
}

/** The pool once it is warm with `idle` idle members, none being made or bound. */
export const poolAt = (world: PoolBurstWorld, idle: number): Promise<ClusterPool> =>
  eventually(
    async () =>
      satisfying(
        await readPool(world),
        (pool) => pool?.status?.idle === idle && pool.status.refilling === 0 && pool.status.binding === 0,
      ),
    { what: `pool warm with ${idle} idle cluster(s)`, timeoutMs: world.patienceMs, intervalMs: 500 },
  ) as Promise<ClusterPool>;

/** Creates a Cluster and measures, polling every 20 ms, how long until it says Ready. */
export async function timeToReady(world: PoolBurstWorld, name: string): Promise<BurstResult> {
  const started = performance.now();
  await world.custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: world.namespace,
    body: aCluster({ name, namespace: world.namespace, profile: world.profile, tenancy: "Exclusive" }),
  });
  const cluster = (await eventually(
    async () => satisfying(await readCluster(world, name), (c) => c?.status?.phase === "Ready"),
    { what: `Cluster ${name} Ready`, timeoutMs: world.patienceMs, intervalMs: 20 },
  )) as Cluster;
  return { name, ms: Math.round(performance.now() - started), cluster };
}

/**
 * With the pool warm: one Cluster more than it keeps at once, each warm member serving one, the last made; the
 * figures printed (`label`: the backend); the pool back at its size with other members.
 */
export async function burstOfOneMore(
  world: PoolBurstWorld,
  label: string,
): Promise<{ fromPool: BurstResult[]; made: BurstResult }> {
  const warmIds = ((await poolAt(world, world.size)).status?.members ?? []).map((member) => member.id).sort();
  const results = await Promise.all(burstNames(world).map((name) => timeToReady(world, name)));
  console.log(
    `${label}: time from creation to Ready: ${results
      .map((r) => `${r.name} ${r.ms} ms (${poolMemberOf(r.cluster) ? "pool" : "made"})`)
      .join(", ")}`,
  );
  const fromPool = results.filter((r) => poolMemberOf(r.cluster));
  const made = results.filter((r) => !poolMemberOf(r.cluster));
  expect(fromPool.map((r) => poolMemberOf(r.cluster)).sort()).toEqual(warmIds);
  expect(made).toHaveLength(1);
  const refilled = ((await poolAt(world, world.size)).status?.members ?? []).map((member) => member.id);
  expect(refilled.filter((id) => warmIds.includes(id))).toEqual([]);
  return { fromPool, made: made[0] as BurstResult };
}

/** Deletes the burst's Clusters and the pool; resolves once they are gone and `backendEmpty` holds. */
export async function deleteAll(world: PoolBurstWorld, backendEmpty: () => boolean): Promise<void> {
  for (const name of burstNames(world))
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: world.namespace,
      name,
    });
  await world.custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: POOL });
  await eventually(
    async () => {
      const left = await Promise.all(burstNames(world).map((name) => readCluster(world, name)));
      return satisfying(
        { clusters: left.filter(Boolean).length, pool: await readPool(world), backendEmpty: backendEmpty() },
        (state) => state.clusters === 0 && state.pool === undefined && state.backendEmpty,
      );
    },
    { what: "Clusters, pool and their clusters gone", timeoutMs: world.patienceMs, intervalMs: 1_000 },
  );
}
