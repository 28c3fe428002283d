/**
 * The light global setup of the API-server loop (vitest.api.config.ts): only the kube binaries (built on the
 * first run on a machine), for tests that start real kube-apiservers and nothing heavier.
 */
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";

export default function setup(): void {
  const assets = findKubeAssets();
  const versions = kubeAssetVersions(assets);
  console.log(
    `Node ${process.version}; kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd} from ${assets.directory}`,
  );
}
