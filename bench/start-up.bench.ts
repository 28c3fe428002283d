/**
 * Benchmark: the engine's start-up as users run it, compiled JavaScript (dist/cli/main.js, as the image
 * runs it) against today's TypeScript type-stripping start (src/cli/main.ts), both under the image's V8
 * flags (NODE_OPTIONS from the Dockerfile), alternating, in the same run:
 *  - the bare process: `node <entry> --help` (main.ts only) and `node <entry> run --help` (also the whole
 *    module graph of `run`, so the difference is module loading), wall time to exit;
 *  - `node <entry> run` against an empty API server (CRDs installed): wall time and CPU from spawn until
 *    /readyz answers 200 (caches synced), RSS and V8 heap used at that moment, RSS again 5 s later.
 * Prints min / median / max per entry and the ratio dist/src of the medians; asserts nothing.
 *
 * Usage: node bench/start-up.bench.ts [--runs 5]
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startControlPlane } from "../src/controlplane/control-plane.ts";
import { installingCrds } from "../src/runtime/api-server/install-crds.ts";
import { freePorts } from "../src/util/free-ports.ts";
import { cpuSeconds, imageNodeOptions, sample } from "./engine-process.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const root = join(import.meta.dirname, "..");
execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const entries = { src: join(root, "src/cli/main.ts"), dist: join(root, "dist/cli/main.js") } as const;
type Entry = keyof typeof entries;
/** The image's V8 flags. */
const nodeOptions = imageNodeOptions();
const env = { ...process.env, NODE_OPTIONS: nodeOptions };

/** Spawns `node <entry> <args>`, its output kept (the tail) for the error if it fails. */
function launch(entry: Entry, args: readonly string[]): { child: ChildProcess; exited: Promise<string> } {
  const child = spawn(process.execPath, [entries[entry], ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => resolve(`exited (${signal ?? code}):\n${output}`)),
  );
  return { child, exited };
}

/** Wall ms of `node <entry> <args>` to its exit (status 0). */
async function timeToExit(entry: Entry, args: readonly string[]): Promise<number> {
  const start = performance.now();
  const { child, exited } = launch(entry, args);
  const how = await exited;
  if (child.exitCode !== 0) throw new Error(`node ${entry} ${args.join(" ")} ${how}`);
  return performance.now() - start;
}

/** VmRSS of a live process, in bytes. */
const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;

/**
 * One `run` from spawn to /readyz 200 and 5 s on, then SIGTERM. Spawned here rather than through
 * startEngineProcess: that one adds --inspect (an inspector thread and its port, which change start-up
 * time and RSS) and waits for /metrics, not for readiness.
 */
async function startOnce(entry: Entry, kubeconfig: string, stateDirectory: string) {
  const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
  const start = performance.now();
  const { child, exited } = launch(entry, [
    "run",
    "--provider-name=bench",
    `--kubeconfig=${kubeconfig}`,
    `--state-dir=${stateDirectory}`,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    "--log-level=warn",
  ]);
  const pid = child.pid ?? 0;
  let failed: string | undefined;
  void exited.then((how) => {
    failed = `the engine (${entry}) ${how}`;
  });
  try {
    // Polled every 10 ms: fine enough against a start of hundreds of ms, light on a shared machine.
    for (;;) {
      if (failed) throw new Error(failed);
      if (performance.now() - start > 60_000) throw new Error(`the engine (${entry}) not ready after 60 s`);
      const status = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (response) => response.status,
        () => 0, // not listening yet
      );
      if (status === 200) break;
      await sleep(10);
    }
    const readyMs = performance.now() - start;
    // RSS and CPU first: reading /metrics makes the process allocate.
    const readyRss = rssOf(pid);
    const readyCpu = cpuSeconds([pid]);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const readyHeap = sample(metrics, "nodejs_heap_size_used_bytes") ?? Number.NaN;
    await sleep(5_000);
    if (failed) throw new Error(failed);
    const settledRss = rssOf(pid);
    return { readyMs, readyCpu, readyRss, readyHeap, settledRss };
  } finally {
    if (!failed) {
      child.kill("SIGTERM");
      await exited;
    }
  }
}

const figures = {
  "`--help`, wall ms": { scale: 1, digits: 0 },
  "`run --help`, wall ms": { scale: 1, digits: 0 },
  "spawn → /readyz 200, wall ms": { scale: 1, digits: 0 },
  "spawn → /readyz 200, CPU s": { scale: 1, digits: 2 },
  "RSS at ready, MB": { scale: 1024 * 1024, digits: 0 },
  "heap used at ready, MB": { scale: 1024 * 1024, digits: 1 },
  "RSS 5 s later, MB": { scale: 1024 * 1024, digits: 0 },
} as const;
type Figure = keyof typeof figures;
const series = () =>
  Object.fromEntries(Object.keys(figures).map((f) => [f, [] as number[]])) as Record<Figure, number[]>;
const measured: Record<Entry, Record<Figure, number[]>> = { src: series(), dist: series() };
const order: Entry[] = ["src", "dist"];
/** Run i's order: src first in even runs, dist first in odd ones, so neither always follows the other. */
const alternating = (i: number) => (i % 2 === 0 ? order : [...order].reverse());

// The bare processes first, before the control plane runs beside them; one discarded start of each
// entry fills the page cache for both module graphs.
for (const entry of order) await timeToExit(entry, ["run", "--help"]);
for (let i = 0; i < runs; i++) {
  for (const entry of alternating(i)) {
    measured[entry]["`--help`, wall ms"].push(await timeToExit(entry, ["--help"]));
    measured[entry]["`run --help`, wall ms"].push(await timeToExit(entry, ["run", "--help"]));
  }
}

const states = mkdtempSync(join(tmpdir(), "start-up-"));
const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
try {
  for (let i = 0; i < runs; i++) {
    for (const entry of alternating(i)) {
      const run = await startOnce(entry, controlPlane.kubeconfigPath, mkdtempSync(join(states, `${entry}-`)));
      measured[entry]["spawn → /readyz 200, wall ms"].push(run.readyMs);
      measured[entry]["spawn → /readyz 200, CPU s"].push(run.readyCpu);
      measured[entry]["RSS at ready, MB"].push(run.readyRss);
      measured[entry]["heap used at ready, MB"].push(run.readyHeap);
      measured[entry]["RSS 5 s later, MB"].push(run.settledRss);
    }
  }
} finally {
  await controlPlane.stop();
  rmSync(states, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
console.log(
  `start-up, ${runs} runs per entry (alternating), Node ${process.version}, NODE_OPTIONS="${nodeOptions}"`,
);
console.log(
  `${"".padEnd(30)}${"src min / med / max".padStart(22)}${"dist min / med / max".padStart(22)}  dist/src`,
);
for (const [figure, { scale, digits }] of Object.entries(figures) as [Figure, (typeof figures)[Figure]][]) {
  const cells = order.map((entry) => {
    const xs = measured[entry][figure].map((x) => x / scale);
    return [Math.min(...xs), median(xs), Math.max(...xs)].map((x) => x.toFixed(digits)).join(" / ");
  });
  const ratio = median(measured.dist[figure]) / median(measured.src[figure]);
  console.log(`${figure.padEnd(30)}${cells.map((c) => c.padStart(22)).join("")}  ${ratio.toFixed(2)}×`);
}
