/**
 * Benchmark: the engine as users run it — its own `run` process, zero-delay simulated backend — taking
 * N Clusters to Ready on a real API server, with its memory (RSS and V8 heap, read from its /metrics)
 * at idle and at rest afterwards; then, against it, a bare client making the minimal writes for the same
 * N in the same run (the engine stopped meanwhile). Prints figures; asserts nothing.
 *
 * The engine runs as the image runs it: compiled JavaScript (`npm run build`, done here first) under the
 * image's V8 flags (NODE_OPTIONS from the Dockerfile); `--entry src` runs the TypeScript sources instead,
 * `--node-options` other flags.
 *
 * Usage: node bench/run-scale.bench.ts [--clusters 1000] [--concurrency 16] [--entry dist|src] [--node-options "…"]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { benchWorld, minimalClusterWrites, pool } from "./bench-clusters.ts";
import {
  cpuSeconds,
  createUntilReady,
  imageNodeOptions,
  sample,
  startEngineProcess,
  sum,
} from "./engine-process.ts";

const { values } = parseArgs({
  options: {
    clusters: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "16" },
    entry: { type: "string", default: "dist" },
    "node-options": { type: "string" },
  },
});
const count = Number(values.clusters);
const concurrency = Number(values.concurrency);
const root = join(import.meta.dirname, "..");
if (values.entry === "dist")
  execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const main = join(root, values.entry === "dist" ? "dist/cli/main.js" : "src/cli/main.ts");
const nodeOptions = values["node-options"] ?? imageNodeOptions();

/** RSS and heap of a bare Node process that only imports client-node, under the same flags, after a full GC. */
function libraryFloor(nodeOptions: string): { rss: number; heapUsed: number } {
  const script =
    'await import("@kubernetes/client-node"); globalThis.gc(); await new Promise((r) => setTimeout(r, 300)); globalThis.gc(); const m = process.memoryUsage(); console.log(JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed }));';
  const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
    encoding: "utf8",
  });
  return JSON.parse(out) as { rss: number; heapUsed: number };
}

const mb = (bytes: number | undefined) =>
  bytes === undefined ? "?" : `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const state = mkdtempSync(join(tmpdir(), "run-scale-"));
const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
reuseConnections(controlPlane.kubeConfig);
try {
  const custom = await benchWorld(controlPlane.kubeConfig, ["engine", "baseline"]);
  const engineArgs = [
    "--provider-name=bench",
    "--environment=bench",
    `--kubeconfig=${controlPlane.kubeconfigPath}`,
    `--state-dir=${state}`,
    "--backend-option=delay=0s",
    `--concurrency=${concurrency}`,
    "--no-leader-elect",
    "--log-level=error",
  ];
  const writes = (text: string) =>
    sum(text, "rest_client_requests_total", (labels) => !labels.includes('method="GET"'));
  const reconciled = (text: string) =>
    sum(text, "controller_runtime_reconcile_total", (labels) => labels.includes('controller="cluster"'));

  let engine = await startEngineProcess(main, engineArgs, nodeOptions);
  await sleep(3_000); // the profile made, caches synced, start-up garbage collected
  const idle = await engine.metrics();
  await engine.collectGarbage();
  const idleCollected = await engine.metrics();
  console.log(
    `${count} Clusters through \`run\` (${values.entry}, NODE_OPTIONS="${nodeOptions}", pid ${engine.child.pid}), ${concurrency} in flight, Node ${process.version}\n`,
  );

  const server = [controlPlane.apiServer.pid, controlPlane.etcd.pid];
  const serverCpuBefore = cpuSeconds(server);
  const engineCpuBefore = cpuSeconds([engine.child.pid ?? 0]);
  const start = performance.now();
  const { peakRss } = await createUntilReady(engine, custom, {
    namespace: "engine",
    profile: "bench.bench.sim",
    count,
    concurrency,
  });
  const engineMs = performance.now() - start;
  const engineCpu = cpuSeconds([engine.child.pid ?? 0]) - engineCpuBefore;
  const serverCpuEngine = cpuSeconds(server) - serverCpuBefore;
  await sleep(5_000); // at rest: requeues and watch echoes have passed
  const rest = await engine.metrics();
  await engine.collectGarbage();
  const restCollected = await engine.metrics();
  await engine.stop();

  // A restart over N Ready Clusters: every one reconciled again, and nothing written.
  const restartStart = performance.now();
  engine = await startEngineProcess(main, engineArgs, nodeOptions);
  while (reconciled(await engine.metrics()) < count) await sleep(100);
  const restartMs = performance.now() - restartStart;
  await sleep(5_000); // anything a restart would write has been written
  const restarted = await engine.metrics();
  await engine.stop();

  // The baseline, with the engine gone: the minimal writes a provider must make for the same N.
  const serverCpuBaselineBefore = cpuSeconds(server);
  const clientCpuBefore = process.cpuUsage();
  const baselineStart = performance.now();
  await pool(count, concurrency, (i) =>
    minimalClusterWrites(custom, "baseline", `c-${i}`, "bench.other.sim"),
  );
  const baselineMs = performance.now() - baselineStart;
  const clientUsage = process.cpuUsage(clientCpuBefore);
  const clientCpu = (clientUsage.user + clientUsage.system) / 1e6;
  const serverCpuBaseline = cpuSeconds(server) - serverCpuBaselineBefore;

  const floor = libraryFloor(nodeOptions);
  const rss = (text: string) => sample(text, "process_resident_memory_bytes");
  const heap = (text: string) => sample(text, "nodejs_heap_size_used_bytes") ?? 0;
  const row = (label: string, value: string) => console.log(`${label.padEnd(50)}${value}`);
  row(
    "engine (`run`): create → all Ready",
    `${(engineMs / 1_000).toFixed(1)} s (${(engineMs / count).toFixed(2)} ms per Cluster)`,
  );
  row(
    "baseline: the minimal writes, same N",
    `${(baselineMs / 1_000).toFixed(1)} s (${(baselineMs / count).toFixed(2)} ms per Cluster)`,
  );
  row("ratio engine / baseline", `${(engineMs / baselineMs).toFixed(2)}×`);
  const perCluster = (seconds: number) => `${((seconds * 1_000) / count).toFixed(2)} ms`;
  row(
    "CPU per Cluster: engine / baseline client",
    `${perCluster(engineCpu)} / ${perCluster(clientCpu)} (${(engineCpu / clientCpu).toFixed(2)}×)`,
  );
  row(
    "CPU per Cluster: API server + etcd, engine / base",
    `${perCluster(serverCpuEngine)} / ${perCluster(serverCpuBaseline)} (${(serverCpuEngine / serverCpuBaseline).toFixed(2)}×)`,
  );
  const reads = sum(rest, "rest_client_requests_total", (labels) => labels.includes('method="GET"'));
  row("reconciles per Cluster, create → at rest", (reconciled(rest) / count).toFixed(2));
  row(
    "API requests per Cluster: writes (baseline: 3) + reads",
    `${(writes(rest) / count).toFixed(2)} + ${(reads / count).toFixed(2)}`,
  );
  row("RSS idle → at rest (peak while working)", `${mb(rss(idle))} → ${mb(rss(rest))} (${mb(peakRss)})`);
  row("RSS after a full GC: idle → at rest", `${mb(rss(idleCollected))} → ${mb(rss(restCollected))}`);
  row(
    "V8 heap used after a full GC: idle → at rest",
    `${mb(heap(idleCollected))} → ${mb(heap(restCollected))}`,
  );
  row(
    "retained heap per Cluster (after a full GC)",
    `${((heap(restCollected) - heap(idleCollected)) / count / 1024).toFixed(1)} KB`,
  );
  row(
    "floor: Node importing @kubernetes/client-node",
    `RSS ${mb(floor.rss)}, heap ${mb(floor.heapUsed)} (the engine idle is ${mb((rss(idleCollected) ?? 0) - floor.rss)} above)`,
  );
  row(
    `restart over ${count} Ready: all reconciled`,
    `${(restartMs / 1_000).toFixed(1)} s from spawn, ${reconciled(restarted)} reconciles, ${writes(restarted)} writes`,
  );
} finally {
  await controlPlane.stop();
  rmSync(state, { recursive: true, force: true });
}
