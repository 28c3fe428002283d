/**
 * Benchmark: N Clusters to Ready on a real API server with the zero-delay simulated backend, against a
 * baseline measured in the same run (a bare client doing only create + finalizer + status per object),
 * then writes at steady state and pure steps per second. Prints figures; asserts nothing.
 *
 * Usage: npm run bench [-- --clusters 1000 --concurrency 16]
 */

import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../src/api/cluster.ts";
import { CLUSTERS_API_VERSION, RESOURCES } from "../src/api/constants.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { stepCluster } from "../src/machines/cluster/step.ts";
import { applied } from "../src/machines/shared/json-patch.ts";
import { SimulatedBackend } from "../src/providers/simulated.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { Engine } from "../src/runtime/engine.ts";
import { CACHES } from "../src/runtime/kinds/caches.ts";
import { clusterBody, minimalClusterWrites, pool } from "./bench-clusters.ts";

const { values } = parseArgs({
  options: { clusters: { type: "string", default: "1000" }, concurrency: { type: "string", default: "16" } },
});
const count = Number(values.clusters);
const concurrency = Number(values.concurrency);
const PROFILE = "bench.bench.sim";
/** The baseline's objects name another provider's profile, so the engine leaves them alone. */
const BASELINE_PROFILE = "bench.baseline.sim";

const body = (name: string, profile = PROFILE) => clusterBody(name, profile);

const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
// The baseline client reuses its TLS connections as the engine does: a fair bare client.
reuseConnections(controlPlane.kubeConfig);
try {
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["baseline", "engine"]) await core.createNamespace({ body: { metadata: { name } } });
  for (const [name, provider] of [
    [PROFILE, "bench"],
    [BASELINE_PROFILE, "baseline"],
  ]) {
    await custom.createClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      body: {
        apiVersion: CLUSTERS_API_VERSION,
        kind: "ClusterProfile",
        metadata: { name },
        spec: {
          providerRef: { name: provider },
          providerConfigRef: { name: "sim" },
          supportedVersions: [{ version: "1.33.3" }],
        },
      },
    });
  }
  console.log(
    `${count} Clusters, ${concurrency} in flight, Node ${process.version}, API server ${controlPlane.server}\n`,
  );

  // Baseline: the minimal writes a provider must make, with nothing else going on.
  const baselineStart = performance.now();
  await pool(count, concurrency, (i) => minimalClusterWrites(custom, "baseline", `c-${i}`, BASELINE_PROFILE));
  const baselineMs = performance.now() - baselineStart;

  // The engine: same objects, same creation concurrency, until every Cluster is Ready.
  const backend = new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 0, deleteDelayMs: 0 });
  const engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName: "bench",
    environment: "bench",
    backend,
    concurrency,
  });
  await engine.start();
  const readyKeys = new Set<string>();
  engine.informers.of(CACHES.clusters).on((event) => {
    if (event.object.metadata.namespace === "engine" && event.object.status?.phase === "Ready")
      readyKeys.add(event.key);
  });
  const engineStart = performance.now();
  await pool(count, concurrency, async (i) => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "engine",
      body: body(`c-${i}`),
    });
  });
  while (readyKeys.size < count) await sleep(10);
  const engineMs = performance.now() - engineStart;
  const writesToReady = engine.machine("Cluster").writes;
  await engine.machine("Cluster").events.flush(); // Events go out in the background; count those of the way to Ready
  const eventsToReady = engine.machine("Cluster").events.written;

  // Steady state: let every requeue and watch echo pass, then count writes over a quiet window.
  await sleep(3_000);
  const before = {
    writes: engine.machine("Cluster").writes,
    events: engine.machine("Cluster").events.written,
  };
  await Promise.all([...readyKeys].slice(0, 50).map((key) => engine.machine("Cluster").reconcile(key)));
  await sleep(2_000);
  const steadyWrites =
    engine.machine("Cluster").writes -
    before.writes +
    (engine.machine("Cluster").events.written - before.events);
  await engine.stop();

  // Pure steps per second on one core: the steady-state step of a Ready Cluster, and a first step.
  const profile = engine.informers.of(CACHES.profiles).get(PROFILE);
  const sample = engine.informers.of(CACHES.clusters).get("engine/c-0") as Cluster;
  const observation = await backend.observe({
    uid: sample.metadata.uid ?? "",
    namespace: "engine",
    name: "c-0",
    tenancy: "Exclusive",
    profile: PROFILE,
    providerConfig: "sim",
  });
  const input = {
    profile,
    providerName: "bench",
    observation,
    now: "2026-11-21T10:00:00Z",
    timing: { pollMs: 1_000, retryMs: 30_000, resyncMs: 600_000 },
  };
  const fresh = applied(sample, [
    { op: "remove", path: "/status" },
    { op: "remove", path: "/metadata/finalizers" },
  ]);
  const rate = (cluster: Cluster) => {
    const iterations = 50_000;
    for (let i = 0; i < 2_000; i++) stepCluster({ ...input, cluster }); // warm up
    const start = performance.now();
    for (let i = 0; i < iterations; i++) stepCluster({ ...input, cluster });
    return iterations / ((performance.now() - start) / 1_000);
  };
  const steadyRate = rate(sample);
  const firstRate = rate(fresh);

  const row = (label: string, value: string, target = "") =>
    console.log(`${label.padEnd(44)}${value.padEnd(16)}${target}`);
  row("measure", "value", "target");
  row("baseline: create+finalizer+status, all", `${(baselineMs / 1_000).toFixed(2)} s`);
  row("engine: create → all Ready", `${(engineMs / 1_000).toFixed(2)} s`);
  row("ratio engine / baseline", `${(engineMs / baselineMs).toFixed(2)}×`, "≤ 1.5×");
  row("writes to Clusters per Cluster to Ready", (writesToReady / count).toFixed(2), "≤ 3");
  row("Events written per Cluster to Ready", (eventsToReady / count).toFixed(2));
  row("writes at steady state (5 s, 50 forced reconciles)", String(steadyWrites), "0");
  row("pure steps/s, Ready Cluster at rest", `${Math.round(steadyRate).toLocaleString("en")}`, "≥ 100,000");
  row("pure steps/s, new Cluster (first step)", `${Math.round(firstRate).toLocaleString("en")}`);
} finally {
  await controlPlane.stop();
}
