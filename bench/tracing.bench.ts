/**
 * Benchmark: what tracing costs the engine as users run it — its own `run` process (compiled, the image's V8
 * flags), zero-delay simulated backend, N Clusters to Ready on a real API server — with OTEL_* unset (the
 * baseline, measured in the same run), with the SDK on and nothing sampled, and with every trace exported
 * over OTLP gRPC to a real Jaeger. Each round runs every mode, starting with another one each time, each in a namespace of its own that the engine alone
 * watches, so no round reconciles another's Clusters; each round's CPU includes a tail in which the batch
 * exporter sends what is left. Prints figures; asserts nothing.
 *
 * On a shared machine, CPU seconds move with the load of others (the same mode's rounds spread by up to 25 %),
 * so the bench prints, beside each mode's median, the spread of its rounds and the median of the per-round
 * ratios to the unset run of the same round (which saw about the same load), and then a figure load does not
 * move: extra runs of the engine with every trace exported, under V8's sampling profiler for exactly the
 * measured window, and the share of their CPU samples spent in tracing's code (OpenTelemetry's SDK and
 * exporter, gRPC and protobufjs, the engine's src/runtime/tracing/; see profile-share.ts).
 *
 * Usage: node bench/tracing.bench.ts [--clusters 1000] [--rounds 6] [--concurrency 16]
 *   [--modes unset,unsampled,sampled,traced] [--profile-rounds 2] [--profile-dir <folder to keep them in>]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
import {
  type CpuProfile,
  cpuTimes,
  createUntilReady,
  imageNodeOptions,
  startEngineProcess,
} from "./engine-process.ts";
import { hottest, type Owner, profileShares, TRACING_OWNERS, tracingShare } from "./profile-share.ts";

const { values } = parseArgs({
  options: {
    clusters: { type: "string", default: "1000" },
    rounds: { type: "string", default: "6" },
    concurrency: { type: "string", default: "16" },
    modes: { type: "string", default: "unset,unsampled,sampled,traced" },
    "profile-rounds": { type: "string", default: "2" },
    "profile-dir": { type: "string" },
    "node-options": { type: "string" },
  },
});
const count = Number(values.clusters);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const profileRounds = Number(values["profile-rounds"]);
const profileDir = values["profile-dir"];
const root = join(import.meta.dirname, "..");
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const main = join(root, "dist/cli/main.js");
const nodeOptions = values["node-options"] ?? imageNodeOptions();
/** After all are Ready: requeues pass and the batch exporter (5 s schedule) sends what is left. */
const TAIL_MS = 7_000;
/** V8's sampling interval for the profiled runs: 5 s of CPU give ~20,000 samples. */
const PROFILE_INTERVAL_MICROS = 250;

const state = mkdtempSync(join(tmpdir(), "tracing-bench-"));
const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
reuseConnections(controlPlane.kubeConfig);
const jaeger = await startJaeger();
/** OTEL_* unset; the SDK on with nothing sampled (always_off); a fifth of the traces; every trace exported. */
const ALL_MODES = ["unset", "unsampled", "sampled", "traced"] as const;
type Mode = (typeof ALL_MODES)[number];
const MODES = values.modes.split(",").map((mode) => {
  if (!(ALL_MODES as readonly string[]).includes(mode))
    throw new Error(`--modes: ${mode} is none of ${ALL_MODES.join(", ")}`);
  return mode as Mode;
});
if (!MODES.includes("unset")) MODES.unshift("unset");
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
interface Figures {
  cpu: number[];
  user: number[];
  wall: number[];
  rss: number[];
  spans: number[];
}
const figures = Object.fromEntries(
  MODES.map((mode) => [mode, { cpu: [], user: [], wall: [], rss: [], spans: [] } satisfies Figures]),
) as unknown as Record<Mode, Figures>;
const profiles: Record<"unset" | "traced", ReturnType<typeof profileShares>[]> = { unset: [], traced: [] };

/** One run: an engine of `mode` in `namespace`, N Clusters to Ready, and the tail; `profile`d if asked. */
async function run(mode: Mode, namespace: string, profile: boolean) {
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
  const stopProfile = profile ? await engine.startProfile(PROFILE_INTERVAL_MICROS) : undefined;
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
  const cpuProfile: CpuProfile | undefined = await stopProfile?.();
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
  return { cpu, user, wall, rss: peakRss, spans: spans / count, cpuProfile };
}

const median = (list: readonly number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
const percent = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;

let custom: Awaited<ReturnType<typeof benchWorld>>;
try {
  // Each round runs every mode, starting with another one each time, so no mode always runs on the fullest
  // API server or always follows the same one.
  const plan: { mode: Mode; namespace: string; profile: boolean }[] = Array.from(
    { length: rounds },
    (_, round) =>
      MODES.map((_, i) => MODES[(i + round) % MODES.length] as Mode).map((mode) => ({
        mode,
        namespace: `${mode}-${round}`,
        profile: false,
      })),
  ).flat();
  // Then the profiled runs (the profiler costs CPU itself, so they are not among the timed ones).
  for (let round = 0; round < profileRounds; round++)
    for (const mode of round % 2 ? (["traced", "unset"] as const) : (["unset", "traced"] as const))
      plan.push({ mode, namespace: `profiled-${mode}-${round}`, profile: true });
  custom = await benchWorld(
    controlPlane.kubeConfig,
    plan.map(({ namespace }) => namespace),
  );
  console.log(
    `${count} Clusters per round through \`run\` (dist, NODE_OPTIONS="${nodeOptions}"), ${concurrency} in flight, ${rounds} rounds per mode, Node ${process.version}\n`,
  );
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  for (const { mode, namespace, profile } of plan) {
    const result = await run(mode, namespace, profile);
    let note = "";
    if (result.cpuProfile) {
      const shares = profileShares(result.cpuProfile);
      profiles[mode as "unset" | "traced"].push(shares);
      note = `, profiled: ${(tracingShare(shares) * 100).toFixed(1)} % of its samples in tracing's code, ${(((shares.by.get("garbage collector") ?? 0) / shares.total) * 100).toFixed(1)} % in GC`;
      if (profileDir)
        writeFileSync(join(profileDir, `${namespace}.cpuprofile`), JSON.stringify(result.cpuProfile));
      if (mode === "traced" && profileDir)
        console.log(hottest(result.cpuProfile, TRACING_OWNERS, 25).join("\n"));
    } else {
      const f = figures[mode];
      f.cpu.push(result.cpu);
      f.user.push(result.user);
      f.wall.push(result.wall);
      f.rss.push(result.rss);
      f.spans.push(result.spans);
    }
    console.log(
      `  ${namespace.padEnd(18)} create → all Ready ${(result.wall / 1_000).toFixed(1)} s, engine CPU ${result.cpu.toFixed(2)} s (user ${result.user.toFixed(2)} s, tail included), peak RSS ${(result.rss / 2 ** 20).toFixed(0)} MB, ${result.spans.toFixed(1)} spans per Cluster${note}`,
    );
  }
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespace(); // still answering

  const row = (label: string, value: string) => console.log(`${label.padEnd(62)}${value}`);
  const per = (seconds: number) => `${((seconds * 1_000) / count).toFixed(3)} ms`;
  console.log("");
  const each = (format: (figure: Figures) => string) =>
    MODES.map((mode) => format(figures[mode])).join(" / ");
  if (rounds > 0) {
    row(
      `engine CPU per Cluster (median), ${MODES.join(" / ")}`,
      each((f) => per(median(f.cpu))),
    );
    row(
      "  rounds' spread (lowest – highest)",
      each((f) => `${per(Math.min(...f.cpu))} – ${per(Math.max(...f.cpu))}`),
    );
    row(
      "  of which user (JavaScript)",
      each((f) => per(median(f.user))),
    );
    for (const mode of MODES.filter((m) => m !== "unset")) {
      // The ratio in each round to that round's unset run: the load both saw was about the same.
      const ratios = figures[mode].cpu.map((cpu, round) => cpu / (figures.unset.cpu[round] ?? Number.NaN));
      const sorted = [...ratios].sort((a, b) => a - b);
      row(
        `CPU overhead, ${mode} against unset`,
        `medians ${percent(median(figures[mode].cpu) / median(figures.unset.cpu))}; per round: median ${percent(median(ratios))} (${sorted.map(percent).join(", ")})`,
      );
    }
    row(
      "spans per Cluster (median)",
      each((f) => median(f.spans).toFixed(1)),
    );
    row(
      "create → all Ready (median)",
      each((f) => `${(median(f.wall) / 1_000).toFixed(1)} s`),
    );
    row(
      "peak RSS (median)",
      each((f) => `${(median(f.rss) / 2 ** 20).toFixed(0)} MB`),
    );
  }
  if (profileRounds > 0) {
    const share = (list: ReturnType<typeof profileShares>[], owners: readonly Owner[]) =>
      median(list.map((s) => owners.reduce((sum, o) => sum + (s.by.get(o) ?? 0), 0) / s.total));
    const shown = (list: ReturnType<typeof profileShares>[], owners: readonly Owner[]) =>
      `${(share(list, owners) * 100).toFixed(1)} %`;
    row(
      `profiled (${profileRounds} runs each): tracing's code, traced`,
      `${shown(profiles.traced, TRACING_OWNERS)} of CPU samples (OpenTelemetry ${shown(profiles.traced, ["opentelemetry"])}, gRPC/protobuf ${shown(profiles.traced, ["grpc/protobuf"])}, engine's tracing ${shown(profiles.traced, ["engine tracing"])}); unset ${shown(profiles.unset, TRACING_OWNERS)}`,
    );
    row(
      "  garbage collector, unset / traced",
      `${shown(profiles.unset, ["garbage collector"])} / ${shown(profiles.traced, ["garbage collector"])}`,
    );
    row(
      "  Node's internals (sockets, HTTP) uncharged, unset / traced",
      `${shown(profiles.unset, ["node internals", "program (native)"])} / ${shown(profiles.traced, ["node internals", "program (native)"])}`,
    );
  }
} finally {
  await jaeger.stop();
  await controlPlane.stop();
  rmSync(state, { recursive: true, force: true });
}
