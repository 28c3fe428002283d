/**
 * Benchmark: N Clusters to Ready with 1, 2 and 3 sharded replicas, each its own `run --sharding` process
 * (compiled, under the image's NODE_OPTIONS), simulated backend with a short delay, a fresh API server per
 * round. Prints per round the wall time and, per replica, the Clusters it owns, its reconciles, its CPU and
 * its RSS: on a machine with fewer cores than replicas + API server, the split of the work and the CPU are
 * the figures that carry over, not the wall time. Asserts nothing.
 *
 * Usage: node bench/sharding.bench.ts [--clusters 3000] [--replicas 1,2,3] [--delay 200ms] [--concurrency 8]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { RESOURCES } from "../src/api/constants.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { DEFAULT_LEASE_TIMING } from "../src/runtime/leadership/lease.ts";
import { settleTimingFor } from "../src/runtime/sharding/settling.ts";
import { benchWorld, clusterBody, pool } from "./bench-clusters.ts";
import {
  cpuSeconds,
  type EngineProcess,
  imageNodeOptions,
  sample,
  startEngineProcess,
  sum,
} from "./engine-process.ts";

const { values } = parseArgs({
  options: {
    clusters: { type: "string", default: "3000" },
    replicas: { type: "string", default: "1,2,3" },
    delay: { type: "string", default: "200ms" },
    concurrency: { type: "string", default: "8" },
  },
});
const count = Number(values.clusters);
const root = join(import.meta.dirname, "..");
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const main = join(root, "dist/cli/main.js");
const nodeOptions = imageNodeOptions();
const mb = (bytes: number | undefined) =>
  bytes === undefined ? "?" : `${(bytes / 1024 / 1024).toFixed(0)} MB`;

console.log(
  `${count} Clusters, sharded replicas as \`run --sharding\` processes (dist, NODE_OPTIONS="${nodeOptions}"), simulated backend delay ${values.delay}, Node ${process.version}\n`,
);
let single: number | undefined;
for (const replicas of values.replicas.split(",").map(Number)) {
  const state = mkdtempSync(join(tmpdir(), "sharding-bench-"));
  const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  reuseConnections(controlPlane.kubeConfig);
  const engines: EngineProcess[] = [];
  try {
    const custom = await benchWorld(controlPlane.kubeConfig, ["bench"]);
    const args = [
      "--provider-name=bench",
      "--environment=bench",
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      `--state-dir=${state}`, // one simulated world, as one real backend behind all replicas
      `--backend-option=delay=${values.delay}`,
      `--concurrency=${values.concurrency}`,
      "--sharding",
      "--leader-election-namespace=default",
      "--log-level=error",
    ];
    for (let i = 0; i < replicas; i++) engines.push(await startEngineProcess(main, args, nodeOptions));
    // Every replica sees all.
    for (;;) {
      const texts = await Promise.all(engines.map((engine) => engine.metrics()));
      if (texts.every((text) => sum(text, "openmcp_engine_shard_members") === replicas)) break;
      await sleep(200);
    }
    // The ring settled (members unchanged for the quiet window: every replica joined), then two retry
    // periods: acknowledgements published and read.
    await sleep(settleTimingFor(DEFAULT_LEASE_TIMING).quietMs + 2 * DEFAULT_LEASE_TIMING.retryPeriodMs);

    const pids = engines.map((engine) => engine.child.pid ?? 0);
    const cpuBefore = pids.map((pid) => cpuSeconds([pid]));
    const serverCpuBefore = cpuSeconds([controlPlane.apiServer.pid, controlPlane.etcd.pid]);
    const start = performance.now();
    const creating = pool(count, 16, async (i) => {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "bench",
        body: clusterBody(`c-${i}`, "bench.bench.sim"),
      });
    });
    const peakRss = engines.map(() => 0);
    for (;;) {
      const texts = await Promise.all(engines.map((engine) => engine.metrics()));
      texts.forEach((text, i) => {
        peakRss[i] = Math.max(peakRss[i] ?? 0, sample(text, "process_resident_memory_bytes") ?? 0);
      });
      // Every replica caches every Cluster, so any one of them counts all that are Ready.
      if ((sample(texts[0] ?? "", "openmcp_engine_objects", 'kind="Cluster",phase="Ready"') ?? 0) >= count)
        break;
      await sleep(250);
    }
    await creating;
    const ms = performance.now() - start;
    single ??= ms;
    const serverCpu = cpuSeconds([controlPlane.apiServer.pid, controlPlane.etcd.pid]) - serverCpuBefore;
    console.log(
      `${replicas} replica${replicas === 1 ? "" : "s"}: ${(ms / 1_000).toFixed(1)} s to all Ready (${(ms / count).toFixed(2)} ms per Cluster, ${(ms / single).toFixed(2)}× one replica); API server + etcd CPU ${serverCpu.toFixed(1)} s`,
    );
    const texts = await Promise.all(engines.map((engine) => engine.metrics()));
    texts.forEach((text, i) => {
      const owned = sample(text, "openmcp_engine_shard_owned_objects", 'controller="cluster"') ?? 0;
      const reconciles = sum(text, "controller_runtime_reconcile_total", (l) =>
        l.includes('controller="cluster"'),
      );
      const cpu = cpuSeconds([pids[i] ?? 0]) - (cpuBefore[i] ?? 0);
      console.log(
        `  replica ${i + 1}: owns ${owned} (${((owned / count) * 100).toFixed(1)} %), ${reconciles} reconciles, CPU ${cpu.toFixed(1)} s (${((cpu * 1_000) / Math.max(owned, 1)).toFixed(2)} ms per owned Cluster), RSS peak ${mb(peakRss[i])}`,
      );
    });
  } finally {
    for (const engine of engines) await engine.stop().catch(() => {});
    await controlPlane.stop();
    rmSync(state, { recursive: true, force: true });
  }
}
