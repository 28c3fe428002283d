/**
 * Benchmark: time from a Cluster's creation to Ready on the `local` backend (each cluster a real etcd +
 * kube-apiserver) or the `kind` backend (`--backend kind`: each cluster a real kind cluster on the Docker engine
 * hack/containers/ensure.sh brings up), without a warm pool and with one, side by side in one run: N Clusters created at once on an
 * empty engine, then (once a ClusterPool of N idle clusters is Ready) N more created at once; then, with those
 * deleted, a sleeping pool (2 idle, `spec.awake: 1`: one awake, one hibernated) and two Clusters one after the other:
 * the first bound to the awake member, the second to the sleeping one, woken for it. Measured by the client: from
 * the create call to the first read that says Ready (polled every 20 ms). Prints figures; asserts nothing.
 *
 * Usage: node bench/warm-pool.bench.ts [--clusters 2] [--backend local|kind]
 */

import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../src/api/cluster.ts";
import type { ClusterPool } from "../src/api/cluster-pool.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../src/api/constants/cluster-pool.ts";
import { ENGINE_API_VERSION, RESOURCES } from "../src/api/constants.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import * as kind from "../src/providers/kind/index.ts";
import * as local from "../src/providers/local.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { systemClock } from "../src/runtime/clock.ts";
import { Engine } from "../src/runtime/engine.ts";
import { buildingKindsTimed, mergeKindSettings } from "../src/runtime/kinds/registry.ts";
import { silentLogger } from "../src/runtime/logger.ts";
import { containerToolchain, run } from "../test/support/containers.ts";
import { clusterBody } from "./bench-clusters.ts";

const { values } = parseArgs({
  options: { clusters: { type: "string", default: "2" }, backend: { type: "string", default: "local" } },
});
const count = Number(values.clusters);
const backendName = values.backend;
if (backendName !== "local" && backendName !== "kind")
  throw new Error(`--backend ${backendName}: local or kind`);
const NS = "bench";
const PROFILE = `bench.bench.${backendName}`;
/** A kind cluster takes tens of seconds; a local one seconds. */
const PATIENCE_MS = backendName === "kind" ? 900_000 : 180_000;
const tools = backendName === "kind" ? containerToolchain() : undefined;

/** Polls `read` every 20 ms until `done` holds; gives up after `timeoutMs`. */
async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = PATIENCE_MS,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() > deadline) throw new Error(`gave up waiting; last seen: ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
const stateDirectory = await mkdtemp(join(tmpdir(), "bench-warm-pool-"));
const backend = await (tools ? kind : local).createBackend({
  stateDirectory,
  options: tools
    ? { kind: tools.kind, docker: tools.docker, parallelCreates: String(count) }
    : { stopOnClose: "true" },
  log: silentLogger,
  clock: systemClock,
  readSecret: async () => undefined,
});
const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
const engine = new Engine({
  kubeConfig: controlPlane.kubeConfig,
  providerName: "bench",
  environment: "bench",
  backend,
  kindSettings: mergeKindSettings(buildingKindsTimed({ pollMs: 100, retryMs: 500, resyncMs: 600_000 }), {
    Cluster: { pools: true },
  }),
});
const readCluster = (name: string) =>
  custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name }) as Promise<Cluster>;
const readPool = (name = "warm") =>
  custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name }) as Promise<ClusterPool>;

/** Creates `names` at once; ms from each create call to its first Ready read, and whether it came from the pool. */
async function burst(names: readonly string[]): Promise<Array<{ ms: number; fromPool: boolean }>> {
  return Promise.all(
    names.map(async (name) => {
      const start = performance.now();
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NS,
        body: clusterBody(name, PROFILE),
      });
      const cluster = await until(
        () => readCluster(name),
        (c) => c.status?.phase === "Ready",
      );
      return {
        ms: performance.now() - start,
        fromPool: cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] !== undefined,
      };
    }),
  );
}

try {
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NS } } });
  await engine.start();
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ProviderConfig",
      metadata: { name: backendName },
      spec: {
        backend: backendName,
        ...(tools ? { supportedVersions: [{ version: tools.kubernetesVersion }] } : {}),
      },
    },
  });
  await until(
    () =>
      custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: PROFILE }).catch(() => undefined),
    (profile) => profile !== undefined,
  );

  const without = await burst(Array.from({ length: count }, (_, i) => `cold-${i}`));

  // No refill: the pool's own starts would compete with the measured Clusters for this machine's cores.
  const poolStart = performance.now();
  await custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: "warm" },
      spec: { providerConfig: backendName, idle: count, refill: false },
    },
  });
  await until(
    () => readPool(),
    (pool) => pool.status?.idle === count,
  );
  const poolReadyMs = performance.now() - poolStart;
  const withPool = await burst(Array.from({ length: count }, (_, i) => `warm-${i}`));

  // A sleeping pool, on a quieter machine: the Clusters above and the first pool go first.
  const made = Array.from({ length: count }, (_, i) => [`cold-${i}`, `warm-${i}`]).flat();
  for (const name of made)
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name });
  await custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" });
  await until(
    () => custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS }),
    (list) => (list as { items: unknown[] }).items.length === 0,
  );
  const sleepyStart = performance.now();
  await custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: "sleepy" },
      spec: { providerConfig: backendName, idle: 2, awake: 1, refill: false },
    },
  });
  await until(
    () => readPool("sleepy"),
    (pool) => pool.status?.idle === 1 && pool.status.asleep === 1,
  );
  const sleepyReadyMs = performance.now() - sleepyStart;
  const [firstBind] = await burst(["sleepy-first"]);
  const [wakeBind] = await burst(["sleepy-second"]);

  const show = (xs: ReadonlyArray<{ ms: number }>) => xs.map((x) => x.ms.toFixed(0)).join(", ");
  console.log(`${backendName} backend, ${count} Cluster(s) created at once, ms from create to Ready:`);
  console.log(
    `  without a pool: median ${median(without.map((x) => x.ms)).toFixed(0)} ms  (each: ${show(without)})`,
  );
  console.log(
    `  with a pool:    median ${median(withPool.map((x) => x.ms)).toFixed(0)} ms  (each: ${show(withPool)}; ${withPool.filter((x) => x.fromPool).length} of ${count} from the pool)`,
  );
  console.log(
    `  speed-up: ${(median(without.map((x) => x.ms)) / median(withPool.map((x) => x.ms))).toFixed(1)}×`,
  );
  console.log(
    `  the pool of ${count} took ${poolReadyMs.toFixed(0)} ms to fill (paid before any Cluster asked)`,
  );
  console.log(
    `  sleeping pool (2 idle, 1 awake): first Cluster ${firstBind?.ms.toFixed(0)} ms (awake member${firstBind?.fromPool ? "" : "? made"}), second ${wakeBind?.ms.toFixed(0)} ms (woken member${wakeBind?.fromPool ? "" : "? made"}); filled and one put to sleep in ${sleepyReadyMs.toFixed(0)} ms`,
  );
} finally {
  await engine.stop();
  await backend.close?.();
  await controlPlane.stop();
  // kind clusters outlive the engine: remove those made here (the backend names each one's folder after it).
  if (tools)
    for (const name of await readdir(join(stateDirectory, "clusters")).catch(() => []))
      await run(tools.kind, ["delete", "cluster", "--name", name]).catch(() => {});
  await rm(stateDirectory, { recursive: true, force: true });
}
