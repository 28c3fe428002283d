/** Runs once before all tests: reports the Node version and makes sure the kube binaries and Cluster API's manager exist. */
import { findCapiAssets } from "../../src/controlplane/capi-assets.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";

export default function setup(): void {
  const assets = findKubeAssets(); // builds them on the first run on a machine
  const versions = kubeAssetVersions(assets);
  const capi = findCapiAssets(); // likewise, ~2 minutes the first time
  console.log(
    `Node ${process.version}; kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd} from ${assets.directory}; Cluster API ${capi.version} from ${capi.directory}`,
  );
}
