/**
 * Benchmark: `plan` of a change touching N Clusters (their ProviderConfig's offered versions and default), on a real
 * API server with the simulated backend, the Clusters made Ready by the engine first. Beside it, in the same run,
 * two baselines: listing the Clusters alone, and a plan of no change (the caches listed, nothing stepped).
 * Prints time and memory; asserts nothing (the issue's target: ≤ 2 s for 1,000 Clusters).
 *
 * Usage: npm run bench:plan [-- --clusters 1000 --runs 3]
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { RESOURCES } from "../src/api/constants.ts";
import type { ProviderConfig } from "../src/api/provider-config.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { SimulatedBackend } from "../src/providers/simulated.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { Engine } from "../src/runtime/engine.ts";
import { CACHES } from "../src/runtime/kinds/caches.ts";
import { type Plan, type PlanChange, plan } from "../src/runtime/plan/plan.ts";
import { benchWorld, clusterBody, pool } from "./bench-clusters.ts";

const { values } = parseArgs({
  options: {
    clusters: { type: "string", default: "1000" },
    runs: { type: "string", default: "3" },
    /** Print the plan of the first Cluster as text, to see what is planned. */
    show: { type: "boolean", default: false },
  },
});
const count = Number(values.clusters);
const runs = Number(values.runs);
const NAMESPACE = "fleet";
const PROFILE = "bench.bench.sim";

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** `work`'s time and the heap it grew by (after a GC before, when node runs with --expose-gc). */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; heapMb: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  const result = await work();
  const ms = performance.now() - start;
  return { result, ms, heapMb: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20 };
}

const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
reuseConnections(controlPlane.kubeConfig);
try {
  const custom = await benchWorld(controlPlane.kubeConfig, [NAMESPACE]);
  const backend = new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 0, deleteDelayMs: 0 });
  const options = {
    kubeConfig: controlPlane.kubeConfig,
    providerName: "bench",
    environment: "bench",
    backend,
  };

  // The fleet, made Ready by the engine itself (so the plan sees what an engine leaves).
  const engine = new Engine({ ...options, concurrency: 16 });
  await engine.start();
  const ready = new Set<string>();
  engine.informers.of(CACHES.clusters).on((event) => {
    if (event.object.status?.phase === "Ready") ready.add(event.key);
  });
  while (!engine.informers.of(CACHES.profiles).get(PROFILE)) await sleep(20);
  const fleetStart = performance.now();
  await pool(count, 16, async (i) => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NAMESPACE,
      body: clusterBody(`c-${i}`, PROFILE),
    });
  });
  while (ready.size < count) await sleep(20);
  console.log(
    `${count} Clusters Ready in ${seconds(performance.now() - fleetStart)}; Node ${process.version}, API server ${controlPlane.server}`,
  );
  await engine.stop();

  // The change: the ProviderConfig offers newer versions and a new default, which every Cluster of it looks at.
  const config = (await custom.getClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    name: "sim",
  })) as ProviderConfig;
  const { status: _status, ...manifest } = config;
  const change: PlanChange = {
    apply: {
      ...manifest,
      metadata: { name: "sim" },
      spec: {
        ...config.spec,
        supportedVersions: [{ version: "1.35.0" }, { version: "1.34.2" }, { version: "1.33.6" }],
        defaultVersion: "1.35.0",
      },
    } as never,
  };

  console.log(
    "\nrun  list Clusters  plan of nothing  plan of the change (heap grown)  Clusters stepped, written, commands",
  );
  const rss: number[] = [];
  for (let run = 1; run <= runs; run++) {
    const list = await measured(async () => {
      let items = 0;
      let token: string | undefined;
      do {
        const page = (await custom.listNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: NAMESPACE,
          limit: 500,
          ...(token ? { _continue: token } : {}),
        })) as { items: unknown[]; metadata?: { continue?: string } };
        items += page.items.length;
        token = page.metadata?.continue || undefined;
      } while (token);
      return items;
    });
    const nothing = await measured(() => plan([], options));
    const planned = await measured(() => plan([change], options));
    rss.push(process.memoryUsage().rss);
    if (values.show && run === 1) {
      const { formatPlan } = await import("../src/cli/plan.ts");
      const first = planned.result.objects.filter(
        (object) => object.kind !== "Cluster" || object.name === "c-0",
      );
      console.log(formatPlan({ ...planned.result, objects: first }));
    }
    const result: Plan = planned.result;
    const clusters = result.objects.filter((object) => object.kind === "Cluster");
    console.log(
      `${String(run).padEnd(4)} ${seconds(list.ms).padEnd(14)} ${seconds(nothing.ms).padEnd(16)} ${`${seconds(planned.ms)} (${planned.heapMb.toFixed(0)} MiB)`.padEnd(32)} ${clusters.length}, ${
        clusters.filter((object) => object.steps.some((step) => step.writes.length > 0)).length
      }, ${result.summary.commands}`,
    );
  }
  console.log(`\nprocess RSS after each run: ${rss.map(mib).join(", ")}`);
} finally {
  await controlPlane.stop();
}
