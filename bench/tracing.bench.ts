/**
 * Benchmark: what tracing costs the engine as users run it — its own `run` process (compiled, the image's V8
 * flags), zero-delay simulated backend, N Clusters to Ready on a real API server — with OTEL_* unset (the
 * baseline, measured in the same run), with the SDK on and nothing sampled, and with every trace exported
 * over OTLP gRPC to a real Jaeger. Each round runs every mode, starting with another one each time, each in a namespace of its own that the engine alone
 * watches, so no round reconciles another's Clusters; each round's CPU includes a tail in which the batch
 * exporter sends what is left. Prints figures; asserts nothing.
 *
 * Usage: node bench/tracing.bench.ts [--clusters 1000] [--rounds 2] [--concurrency 16]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CoreV1Api } from "@kubernetes/client-node";
import { RESOURCES } from "../src/api/constants.ts";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { reuseConnections } from "../src/runtime/api-server/connection-reuse.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { objectSpanIds } from "../src/runtime/tracing/trace-ids.ts";
import { startJaeger } from "../test/support/jaeger.ts";
import { benchWorld } from "./bench-clusters.ts";
import { cpuTimes, createUntilReady, imageNodeOptions, startEngineProcess } from "./engine-process.ts";

const { values } = parseArgs({
  options: {
    clusters: { type: "string", default: "1000" },
    rounds: { type: "string", default: "2" },
    concurrency: { type: "string", default: "16" },
    "node-options": { type: "string" },
  },
});
const count = Number(values.clusters);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const root = join(import.meta.dirname, "..");
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const main = join(root, "dist/cli/main.js");
const nodeOptions = values["node-options"] ?? imageNodeOptions();
/** After all are Ready: requeues pass and the batch exporter (5 s schedule) sends what is left. */
const TAIL_MS = 7_000;

const state = mkdtempSync(join(tmpdir(), "tracing-bench-"));
const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
reuseConnections(controlPlane.kubeConfig);
const jaeger = await startJaeger();
/** OTEL_* unset; the SDK on with nothing sampled (always_off); a fifth of the traces; every trace exported. */
const MODES = ["unset", "unsampled", "sampled", "traced"] as const;
type Mode = (typeof MODES)[number];
const ENV: Record<Mode, NodeJS.ProcessEnv> = {
  unset: { OTEL_EXPORTER_OTLP_ENDPOINT: "" },
  unsampled: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpGrpc, OTEL_TRACES_SAMPLER: "always_off" },
  sampled: {
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpGrpc,
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: "0.2",
  },
  traced: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpGrpc },
};
const figures = Object.fromEntries(
  MODES.map((mode) => [
    mode,
    { cpu: [] as number[], user: [] as number[], wall: [] as number[], rss: [] as number[] },
  ]),
) as Record<Mode, { cpu: number[]; user: number[]; wall: number[]; rss: number[] }>;
try {
  // Each round starts with another mode, so no mode always runs on the fullest API server.
  const plan: { mode: Mode; namespace: string }[] = Array.from({ length: rounds }, (_, round) =>
    MODES.map((_, i) => MODES[(i + round) % MODES.length] as Mode).map((mode) => ({
      mode,
      namespace: `${mode}-${round}`,
    })),
  ).flat();
  const custom = await benchWorld(
    controlPlane.kubeConfig,
    plan.map(({ namespace }) => namespace),
  );
  console.log(
    `${count} Clusters per round through \`run\` (dist, NODE_OPTIONS="${nodeOptions}"), ${concurrency} in flight, ${rounds} rounds per mode, Node ${process.version}\n`,
  );
  for (const { mode, namespace } of plan) {
    const engine = await startEngineProcess(
      main,
      [
        "--provider-name=bench",
        "--environment=bench",
        `--kubeconfig=${controlPlane.kubeconfigPath}`,
        `--state-dir=${join(state, namespace)}`,
        `--namespace=${namespace}`,
        "--backend-option=delay=0s",
        `--concurrency=${concurrency}`,
        "--no-leader-elect",
        "--log-level=error",
      ],
      nodeOptions,
      ENV[mode],
    );
    await sleep(3_000); // the profile made, caches synced, start-up garbage collected
    const pid = engine.child.pid ?? 0;
    const spansBefore = await jaeger.acceptedSpans();
    const cpuBefore = cpuTimes([pid]);
    const start = performance.now();
    const { peakRss } = await createUntilReady(engine, custom, {
      namespace: namespace,
      profile: "bench.bench.sim",
      count,
      concurrency,
    });
    const wall = performance.now() - start;
    await sleep(TAIL_MS);
    const cpuAfter = cpuTimes([pid]);
    const user = cpuAfter.user - cpuBefore.user;
    const cpu = user + cpuAfter.system - cpuBefore.system;
    if (mode === "traced") {
      // Proof the spans arrived: the first Cluster's trace, in Jaeger.
      const first = (await custom.getNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace,
        name: "c-0",
      })) as { metadata: { uid: string } };
      const spans = await jaeger.trace(objectSpanIds(first.metadata.uid, undefined).traceId);
      if (spans.length === 0) throw new Error(`Jaeger holds no trace of Cluster ${namespace}/c-0`);
    }
    await engine.stop();
    const spans = (await jaeger.acceptedSpans()) - spansBefore;
    figures[mode].cpu.push(cpu);
    figures[mode].user.push(user);
    figures[mode].wall.push(wall);
    figures[mode].rss.push(peakRss);
    console.log(
      `  ${namespace.padEnd(10)} create → all Ready ${(wall / 1_000).toFixed(1)} s, engine CPU ${cpu.toFixed(2)} s (user ${user.toFixed(2)} s, tail included), peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB, ${(spans / count).toFixed(1)} spans per Cluster`,
    );
  }
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespace(); // still answering

  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
  const row = (label: string, value: string) => console.log(`${label.padEnd(52)}${value}`);
  const per = (seconds: number) => `${((seconds * 1_000) / count).toFixed(3)} ms`;
  console.log("");
  const each = (format: (figure: (typeof figures)[Mode]) => string) =>
    MODES.map((mode) => format(figures[mode])).join(" / ");
  row(
    `engine CPU per Cluster, ${MODES.join(" / ")}`,
    each((f) => per(median(f.cpu))),
  );
  row(
    "  of which user (JavaScript)",
    each((f) => per(median(f.user))),
  );
  const overhead = (mode: Mode, of: "cpu" | "user") =>
    `${((median(figures[mode][of]) / median(figures.unset[of]) - 1) * 100).toFixed(1)} %`;
  for (const mode of ["unsampled", "sampled", "traced"] as const)
    row(
      `CPU overhead, ${mode} against unset: all / user`,
      `${overhead(mode, "cpu")} / ${overhead(mode, "user")}`,
    );
  row(
    "create → all Ready (median)",
    each((f) => `${(median(f.wall) / 1_000).toFixed(1)} s`),
  );
  row(
    "peak RSS (median)",
    each((f) => `${(median(f.rss) / 2 ** 20).toFixed(0)} MB`),
  );
} finally {
  await jaeger.stop();
  await controlPlane.stop();
  rmSync(state, { recursive: true, force: true });
}
