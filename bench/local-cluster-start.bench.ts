/**
 * Benchmark: how long one `local` backend cluster takes to start (its own etcd, kube-apiserver and
 * kube-controller-manager, as the backend starts it), against a baseline measured in the same run: the
 * same start without the controller-manager (assets holding only kube-apiserver and etcd). Prints the
 * median and spread of each and their ratio, plus the peak RSS of the controller-manager; asserts nothing.
 *
 * Usage: node bench/local-cluster-start.bench.ts [--runs 5]
 */
import { readFileSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { findKubeAssets, type KubeAssets } from "../src/controlplane/kube-assets.ts";
import {
  startPersistentControlPlane,
  stopPersistentControlPlane,
} from "../src/controlplane/persistent-control-plane.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const full = findKubeAssets();
if (!full.kubeControllerManager)
  throw new Error(`${full.directory} has no kube-controller-manager; run hack/kube/build.sh`);
const root = await mkdtemp(join(tmpdir(), "bench-local-start-"));
// The baseline's assets: the envtest pair only, so no controller-manager is started.
const bareDirectory = join(root, "bare-assets");
await mkdir(bareDirectory);
symlinkSync(full.kubeApiserver, join(bareDirectory, "kube-apiserver"));
symlinkSync(full.etcd, join(bareDirectory, "etcd"));
const bare = findKubeAssets(bareDirectory);

/** Starts one cluster from a fresh folder; returns ms to healthy and the controller-manager's peak RSS. */
async function startOnce(assets: KubeAssets, name: string): Promise<{ ms: number; rssMiB?: number }> {
  const directory = join(root, name);
  await mkdir(directory);
  const start = performance.now();
  const plane = await startPersistentControlPlane({ directory, assets });
  const ms = performance.now() - start;
  const pid = plane.record.pids.controllerManager;
  let rssMiB: number | undefined;
  if (pid !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // let its informers fill
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    rssMiB = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  }
  await stopPersistentControlPlane(directory, { remove: true });
  return { ms, ...(rssMiB === undefined ? {} : { rssMiB }) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
const withKcm: number[] = [];
const without: number[] = [];
const ratios: number[] = [];
const rss: number[] = [];
try {
  await startOnce(full, "warmup"); // page cache, first-start costs
  for (let i = 0; i < runs; i++) {
    const a = await startOnce(full, `with-${i}`);
    const b = await startOnce(bare, `without-${i}`);
    withKcm.push(a.ms);
    without.push(b.ms);
    ratios.push(a.ms / b.ms);
    if (a.rssMiB !== undefined) rss.push(a.rssMiB);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
console.log(`local cluster start, ${runs} runs each (alternating), ms to healthy:`);
console.log(`  with kube-controller-manager:    median ${median(withKcm).toFixed(0)} (${spread(withKcm)})`);
console.log(`  without (etcd + kube-apiserver): median ${median(without).toFixed(0)} (${spread(without)})`);
console.log(
  `  ratio with/without, per pair:    median ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
);
console.log(`  kube-controller-manager peak RSS: median ${median(rss).toFixed(0)} MiB`);
