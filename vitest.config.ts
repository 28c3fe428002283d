/**
 * The test house: three projects, each with only the setup its files need.
 * - `unit`: unit and property tests, pure code, no global setup at all (`npm run test:unit`).
 * - `integration`: real kube-apiservers and etcd; its setup only finds (first time: builds) the kube binaries
 *   (`npm run test:integration`).
 * - `heavy`: kind, Cluster API, Gardener, the engine's image, the browser; named so by file name
 *   (`*.heavy.test.ts`); its setup starts building those assets in the background, so the other projects run
 *   meanwhile, and each heavy file waits for the stages it needs (`npm run test:heavy`).
 * `npm test` runs all three in one run, on one pool of two workers a core (four here): slowest files first, never two files side by
 * side that hold one machine-wide lock (test/support/machine-locks.ts), and, on a machine whose heavy assets are
 * built, heavy files from the start (their longest lock chain bounds the run); on a fresh one, heavy files after the
 * others, each starting once the stage of the assets it needs is built (see test/support/machine-lock-sequencer.ts).
 */
import { availableParallelism } from "node:os";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { machineCache } from "./test/support/machine-cache.ts";
import MachineLockSequencer from "./test/support/machine-lock-sequencer.ts";

const HEAVY = "test/integration/**/*.heavy.test.ts";

// The suite is CPU-bound (2026-11-30, run 32: the machine 96 % busy, over a third of it Go processes on the host:
// kube-apiserver, etcd, kube-controller-manager, Cluster API's managers; on a fresh machine the Go builds too). Their
// garbage collector at GOGC=400 (default 100) trades heap for CPU: one kube-apiserver's start 1.9 → 1.5 CPU-s and
// its RSS 314 → 440 MB; local-backend.test.ts 19 → 15.5 CPU-s. Set here, so that the workers, the asset builds
// and every process they start inherit it; a GOGC of the caller's wins. Kind nodes' processes get it from their image
// (hack/containers/kind-node.sh).
process.env.GOGC ??= "400";
// And one thread of Go code each (GOMAXPROCS=1, default: one a core): dozens of Go servers share two cores with four
// workers, and a server's own threads handing work over to each other only add to it. One file (local-snapshots,
// its control planes and `local` Clusters): 51.5 → 44 CPU-s of the machine, the same 63 s. Builds use every core
// (hack/*: GOMAXPROCS=$(nproc)); a GOMAXPROCS of the caller's wins.
process.env.GOMAXPROCS ??= "1";
// Node's compile cache, per machine, for every Node process of the run: the workers' own modules (vitest and the
// dependencies it loads natively), the CLIs and engines the tests start, the fake kind CLI (288 runs in
// kind-backend.test.ts: 0.09 → 0.03 CPU-s each, no type stripping once cached). A NODE_COMPILE_CACHE of the caller's
// wins; `run` keeps the one it is given.
process.env.NODE_COMPILE_CACHE ??= machineCache("node-compile-cache");

export const unit: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: "unit",
    include: ["test/unit/**/*.test.ts", "test/property/**/*.test.ts"],
    // Pure code: one worker module graph for all files (about a third of the time; each file still runs alone).
    isolate: false,
  },
};

export const integration: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: "integration",
    include: ["test/integration/**/*.test.ts"],
    exclude: [HEAVY],
    globalSetup: ["test/support/global-setup-kube.ts"],
    setupFiles: ["test/support/worker-file-record.ts"],
    hookTimeout: 180_000,
  },
};

export const heavy: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: "heavy",
    include: [HEAVY],
    globalSetup: ["test/support/global-setup-heavy.ts"],
    setupFiles: [
      "test/support/worker-file-record.ts",
      "test/support/heavy-assets-ready.ts",
      "test/support/machine-locks-held.ts",
    ],
    hookTimeout: 180_000,
  },
};

/** How every project runs. */
export const RUNNER = {
  pool: "forks",
  // Most files wait on API servers, leases and containers: with two workers a 2-core machine sat 70–90 % idle
  // (vmstat) through the integration files. With kind nodes' volumes on a journaled filesystem
  // (hack/containers/ensure.sh) three leave it 17 % idle (20:38), four run it in 17:29–20:13 warm, 34:33 cold (2026-11-27,
  // once the test flaws that only load showed were fixed, and kind nodes are removed past frozen cgroups). Each
  // file's control plane takes ~0.5 GiB, a heavy file's clusters a few. So: two workers a core.
  maxWorkers: Math.max(2, 2 * availableParallelism()),
  testTimeout: 60_000,
} as const;

export default defineConfig({
  // Per machine, not per checkout: the files' durations of the last run order the next one (slowest first, locks
  // apart) in a clean checkout too, as CI's is.
  cacheDir: machineCache("vite"),
  test: {
    ...RUNNER,
    projects: [unit, integration, heavy],
    sequence: { sequencer: MachineLockSequencer },
    reporters: ["default", "./test/support/summary-reporter.ts", "./test/support/timeline-reporter.ts"],
  },
});
