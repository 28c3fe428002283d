/**
 * Benchmark: time from a Cluster's creation to Ready on the `local` backend (each cluster a real etcd +
 * kube-apiserver), without a warm pool and with one, side by side in one run: N Clusters created at once on an
 * empty engine, then (once a ClusterPool of N idle clusters is Ready) N more created at once. Measured by the
 * client: from the create call to the first read that says Ready (polled every 20 ms). Prints figures; asserts nothing.
 *
 * Usage: node bench/warm-pool.bench.ts [--clusters 2]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../src/api/cluster.ts";
import type { ClusterPool } from "../src/api/cluster-pool.ts";
import { ANNOTATIONS, ENGINE_API_VERSION, RESOURCES } from "../src/api/constants.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { createBackend } from "../src/providers/local.ts";
import { systemClock } from "../src/runtime/clock.ts";
import { Engine } from "../src/runtime/engine.ts";
import { installingCrds } from "../src/runtime/install-crds.ts";
import { silentLogger } from "../src/runtime/logger.ts";
import { clusterBody } from "./bench-clusters.ts";

const { values } = parseArgs({ options: { clusters: { type: "string", default: "2" } } });
const count = Number(values.clusters);
const NS = "bench";
const PROFILE = "bench.bench.local";

/** Polls `read` every 20 ms until `done` holds; gives up after `timeoutMs`. */
async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 180_000,
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
const backend = await createBackend({
  stateDirectory,
  options: { stopOnClose: "true" },
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
  timing: { pollMs: 100, retryMs: 500, resyncMs: 600_000 },
  kindSettings: { Cluster: { pools: true } },
});
const readCluster = (name: string) =>
  custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name }) as Promise<Cluster>;
const readPool = () =>
  custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" }) as Promise<ClusterPool>;

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
        fromPool: cluster.metadata.annotations?.[ANNOTATIONS.poolMember] !== undefined,
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
      metadata: { name: "local" },
      spec: { backend: "local" },
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
      spec: { providerConfig: "local", idle: count, refill: false },
    },
  });
  await until(readPool, (pool) => pool.status?.idle === count, 60_000);
  const poolReadyMs = performance.now() - poolStart;
  const withPool = await burst(Array.from({ length: count }, (_, i) => `warm-${i}`));

  const show = (xs: ReadonlyArray<{ ms: number }>) => xs.map((x) => x.ms.toFixed(0)).join(", ");
  console.log(`local backend, ${count} Cluster(s) created at once, ms from create to Ready:`);
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
} finally {
  await engine.stop();
  await backend.close?.();
  await controlPlane.stop();
  await rm(stateDirectory, { recursive: true, force: true });
}
