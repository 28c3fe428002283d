/**
 * Builds (first time on a machine) or finds the heavy files' assets, in stages, and answers for each stage as soon
 * as it is there, so a heavy file starts once the stages it needs are (heavy-assets-ready.ts) while later stages
 * still build: on a fresh machine (2026-11-27) the first kind files started 11 minutes into the run, 17 minutes
 * before the last stage was there.
 * Run as a child process by the heavy project's global setup, so the other projects test meanwhile:
 * `node test/support/heavy-assets.ts <answer prefix>`; each stage's answer is written whole.
 */
import { execFileSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import { findCapiProvidersAssets } from "../../src/dev/capi-providers-assets.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import { type ContainerToolchain, parseToolchain } from "./containers.ts";
import { findJaeger } from "./jaeger.ts";
import { machineCache } from "./machine-cache.ts";

/** Where the heavy files find the answers' prefix (the global setup sets it). */
export const HEAVY_ASSETS_ENV = "OPENMCP_TEST_HEAVY_ASSETS";

/**
 * The stages, in the order they are made: the container toolchain first (most heavy files and the longest chain of
 * them need it), then Cluster API (the files that start its managers), then the stages that let the most test time
 * start per minute of building. On a fresh machine (2026-11-30, beside the tests): Gardener's API server 226 s for
 * seven files of about 570 s, Chromium 26 s for two of 26 s, Jaeger 542 s for one of 174 s, MetalLB 387 s for one of
 * 62 s; with Gardener last, its seven files ran after every build, eight minutes past them.
 */
export const HEAVY_STAGES = ["containers", "capi", "gardener", "chromium", "jaeger", "metallb"] as const;
export type HeavyStage = (typeof HEAVY_STAGES)[number];

/** What a stage's answer says: there (with the toolchain, for `containers`), or why it could not be made. */
export type StageAnswer = { readonly toolchain?: ContainerToolchain } | { readonly error: string };

/** The file a stage's answer is written to. */
export const stageAnswerFile = (prefix: string, stage: HeavyStage) => `${prefix}.${stage}.json`;

/**
 * Present once this machine has made every stage: the run's order then starts heavy files from the first minute
 * (a later run only checks the stages, and rebuilds the engine's image for a changed tree); absent, a fresh
 * machine builds for half an hour, and its heavy files come after the others.
 */
export const heavyAssetsBuiltMarker = () => machineCache("heavy-assets.built");

/** The stages each heavy file waits for; a file not named here waits for the container toolchain only. */
const NEEDS: Readonly<Record<string, readonly HeavyStage[]>> = {
  "capi-backend.heavy.test.ts": ["containers", "capi"],
  "capi-backend.conformance.heavy.test.ts": ["containers", "capi"],
  "capi-clusterctl.heavy.test.ts": ["containers", "capi"],
  // `up --capi` runs Cluster API's core manager; `up`'s traces go to Jaeger.
  "cli-up.heavy.test.ts": ["containers", "capi", "jaeger"],
  "capi-provider.heavy.test.ts": ["capi"],
  "engine-control-plane.heavy.test.ts": ["capi"],
  "deploy.heavy.test.ts": ["capi"],
  "watch-scope.heavy.test.ts": ["capi"],
  "kind-metallb.heavy.test.ts": ["containers", "metallb"],
  "live-view.browser.heavy.test.ts": ["chromium"],
  "live-view-scale.browser.heavy.test.ts": ["chromium"],
  "gardener-apiserver.heavy.test.ts": ["gardener"],
  "gardener-backend.heavy.test.ts": ["gardener"],
  "gardener-backend.conformance.heavy.test.ts": ["gardener"],
  "gardener-demo.heavy.test.ts": ["gardener"],
  "gardener-parity.heavy.test.ts": ["gardener"],
  "landscape-gardener.heavy.test.ts": ["gardener"],
  "in-cluster.heavy.test.ts": ["containers", "gardener"],
};

/** The stages the heavy file `path` waits for. */
export function stagesNeededBy(path: string): readonly HeavyStage[] {
  const name = path.split("/").at(-1) ?? path;
  return NEEDS[name] ?? ["containers"];
}

/** The last stage, in build order, that the heavy file `path` waits for: when, at the earliest, it can start. */
export function lastStageNeededBy(path: string): HeavyStage {
  const needed = stagesNeededBy(path);
  return HEAVY_STAGES.findLast((stage) => needed.includes(stage)) ?? "containers";
}

const hack = join(import.meta.dirname, "..", "..", "hack");
const LONG = 3_600_000;

/** Runs a hack/ script (progress on stderr) and returns what it printed on stdout. */
const script = (path: string, args: string[] = [], env?: NodeJS.ProcessEnv) =>
  execFileSync(join(hack, path), args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: LONG,
    env,
  });

/** What each stage does, given the toolchain if the containers stage made it; each returns its answer or throws. */
const MAKE: Readonly<Record<HeavyStage, (toolchain?: ContainerToolchain) => StageAnswer>> = {
  // Docker engine, kind, its node image and the engine's image: built once per machine (the image again for a
  // changed tree, a minute or two), seconds afterwards.
  containers: () => ({
    toolchain: parseToolchain(
      script("containers/ensure.sh", [
        "docker",
        "kind",
        "kube-node-binaries",
        "kind-node-image",
        "engine-image",
      ]),
    ),
  }),
  // The core manager (~2 minutes the first time), then kubeadm control plane and bootstrap, CAPD (~5 minutes).
  capi: () => {
    findCapiAssets();
    findCapiProvidersAssets();
    return {};
  },
  // gardener-apiserver: about 8 minutes the first time beside the tests.
  gardener: () => {
    findGardenerAssets();
    return {};
  },
  // Never fails: without a browser the browser tests fail with the same advice.
  chromium: () => {
    script("browser/ensure-chromium.sh");
    return {};
  },
  // Jaeger, the OTLP receiver of the traces test: about 8 minutes the first time beside the tests.
  jaeger: () => {
    findJaeger();
    return {};
  },
  // MetalLB for kind-metallb.heavy.test.ts: 2–3 minutes the first time once the stages before it
  // filled the Go build cache, then a look at the cache.
  metallb: (toolchain) => {
    if (!toolchain)
      throw new Error("MetalLB's images are built with Docker, and the container toolchain failed");
    script("metallb/build.sh", [], { ...process.env, DOCKER: toolchain.docker });
    return {};
  },
};

function answer(prefix: string, stage: HeavyStage, value: StageAnswer): void {
  const file = stageAnswerFile(prefix, stage);
  writeFileSync(`${file}.partial`, JSON.stringify(value));
  renameSync(`${file}.partial`, file);
}

if (import.meta.main) {
  const prefix = process.argv[2];
  if (!prefix) throw new Error("usage: node test/support/heavy-assets.ts <answer prefix>");
  const started = performance.now();
  const failed: string[] = [];
  let toolchain: ContainerToolchain | undefined;
  for (const stage of HEAVY_STAGES) {
    const stageStarted = performance.now();
    try {
      const made = MAKE[stage](toolchain);
      if ("toolchain" in made) toolchain = made.toolchain;
      answer(prefix, stage, made);
      console.error(
        `heavy assets: ${stage} there (${Math.round((performance.now() - stageStarted) / 1000)} s)`,
      );
    } catch (error) {
      failed.push(stage);
      answer(prefix, stage, { error: (error as Error).message });
    }
  }
  if (failed.length === 0) writeFileSync(heavyAssetsBuiltMarker(), "");
  console.error(
    `heavy assets: ${failed.length === 0 ? "all there" : `failed: ${failed.join(", ")}`} (${Math.round((performance.now() - started) / 1000)} s)`,
  );
}
