/**
 * Builds (first time on a machine) or finds the heavy projects' assets: Cluster API's manager and providers,
 * gardener-apiserver, the container toolchain (Docker engine, kind, the offline node image, the engine's image)
 * and Chromium. Run as a child process by the heavy project's global setup, so the other projects test
 * meanwhile: `node test/support/heavy-assets.ts <answer file>`; the answer is written whole when all is there.
 */
import { execFileSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import { findCapiProvidersAssets } from "../../src/dev/capi-providers-assets.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import { type ContainerToolchain, parseToolchain, parseToolchainValue } from "./containers.ts";

/** Where the heavy files find the answer file's path (the global setup sets it). */
export const HEAVY_ASSETS_ENV = "OPENMCP_TEST_HEAVY_ASSETS";

/**
 * Beside the answer file, once everything but the engine's image is there: a machine whose heavy assets were
 * built before (only the image may be rebuilt, for a changed tree) writes it within seconds.
 */
export const machineReadyMarker = (answer: string) => `${answer}.machine-ready`;

/** What the heavy files receive: the toolchain, or why the assets could not be made. */
export type HeavyAssets = { readonly toolchain: ContainerToolchain } | { readonly error: string };

const hack = join(import.meta.dirname, "..", "..", "hack");

function prepare(answer?: string): HeavyAssets {
  const started = performance.now();
  try {
    const capi = findCapiAssets(); // ~2 minutes the first time
    findCapiProvidersAssets(); // kubeadm control plane and bootstrap, CAPD: ~5 minutes the first time
    const gardener = findGardenerAssets(); // gardener-apiserver, ~15–20 minutes the first time
    // Docker engine, kind and its node image: built once per machine, seconds afterwards.
    const ensure = (steps: string[]) =>
      execFileSync(join(hack, "containers", "ensure.sh"), steps, {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
        timeout: 3_600_000,
      });
    const machine = ensure(["docker", "kind", "kube-node-binaries", "kind-node-image"]);
    const docker = parseToolchainValue(machine, "docker");
    // MetalLB for kind-metallb.heavy.test.ts: 5–20 minutes the first time, then a look at the cache.
    execFileSync(join(hack, "metallb", "build.sh"), [], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DOCKER: docker },
      timeout: 3_600_000,
    });
    // Never fails: without a browser the browser tests fail with the same advice.
    execFileSync(join(hack, "browser", "ensure-chromium.sh"), [], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    // All that a fresh machine builds for long is there: the run's order may start the heavy files now.
    if (answer) writeFileSync(machineReadyMarker(answer), "");
    // The engine's image, rebuilt when the tree changed (a minute or two).
    const toolchain = parseToolchain(`${machine}\n${ensure(["engine-image"])}`);
    console.error(
      `heavy assets: Cluster API ${capi.version} from ${capi.directory}; gardener-apiserver ${gardener.version}; ` +
        `containers: ${toolchain.engineImage}, ${toolchain.nodeImage} (${Math.round((performance.now() - started) / 1000)} s)`,
    );
    return { toolchain };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

if (import.meta.main) {
  const answer = process.argv[2];
  if (!answer) throw new Error("usage: node test/support/heavy-assets.ts <answer file>");
  writeFileSync(`${answer}.partial`, JSON.stringify(prepare(answer)));
  renameSync(`${answer}.partial`, answer);
}
