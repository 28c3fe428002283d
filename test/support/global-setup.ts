/** Runs once before all tests: reports the Node version and makes sure the kube binaries exist. */
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";

export default function setup(): void {
  const assets = findKubeAssets(); // builds them on the first run on a machine
  const versions = kubeAssetVersions(assets);
  console.log(
    `Node ${process.version}; kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd} from ${assets.directory}`,
  );
}
