/**
 * Runs once before all tests: reports the Node version and makes sure the kube binaries, Cluster API's
 * manager, gardener-apiserver and the container toolchain (Docker engine, kind, the offline node image, the engine's image) exist.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import { findCapiProvidersAssets } from "../../src/dev/capi-providers-assets.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import { parseToolchain, TOOLCHAIN_ENV } from "./containers.ts";

export default function setup(): void {
  const assets = findKubeAssets(); // builds them on the first run on a machine
  const versions = kubeAssetVersions(assets);
  const capi = findCapiAssets(); // likewise, ~2 minutes the first time
  findCapiProvidersAssets(); // kubeadm control plane and bootstrap, CAPD: ~5 minutes the first time
  const gardener = findGardenerAssets(); // gardener-apiserver, ~15–20 minutes the first time
  // Docker engine, images and kind: built once per machine, seconds afterwards (the image is rebuilt when
  // the tree changed). Test files read the answer from the environment their workers inherit.
  const started = performance.now();
  const ensure = join(import.meta.dirname, "..", "..", "hack", "containers", "ensure.sh");
  const toolchain = parseToolchain(
    execFileSync(ensure, [], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 3_600_000 }),
  );
  process.env[TOOLCHAIN_ENV] = JSON.stringify(toolchain);
  console.log(
    `Node ${process.version}; kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd} from ${assets.directory}; Cluster API ${capi.version} from ${capi.directory}; gardener-apiserver ${gardener.version}; ` +
      `containers: ${toolchain.engineImage}, ${toolchain.nodeImage} (${Math.round(performance.now() - started)} ms)`,
  );
}
