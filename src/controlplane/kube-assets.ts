/** Locates (and on first use builds) the kube-apiserver and etcd binaries, the envtest way. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { hackScript, isExecutable, requireExecutable, runBuildScript } from "../util/executables.ts";

/** The folder holding `kube-apiserver` and `etcd`, and what they say their versions are. */
export interface KubeAssets {
  readonly directory: string;
  readonly kubeApiserver: string;
  readonly etcd: string;
  /**
   * kube-controller-manager (the build script makes it); absent in folders that hold only the envtest
   * pair, where control planes then run without one (no garbage collection, no namespace deletion, empty
   * aggregated roles).
   */
  readonly kubeControllerManager?: string;
  /** kube-scheduler, built beside it for clusters that get nodes later; not run by the engine. */
  readonly kubeScheduler?: string;
}

/** Versions reported by the binaries themselves. */
export interface KubeAssetVersions {
  readonly kubernetes: string;
  readonly etcd: string;
}

/** The repository's build script; it honours KUBEBUILDER_ASSETS and the per-machine cache. */
export const KUBE_BUILD_SCRIPT = hackScript("kube", "build.sh");

/**
 * Returns the binaries to run: from `directory` if given, else from `KUBEBUILDER_ASSETS`, else from
 * the cache that `hack/kube/build.sh` fills (building them the first time on a machine, which takes
 * minutes; its progress goes to stderr).
 */
export function findKubeAssets(directory?: string): KubeAssets {
  const folder = directory ?? runBuildScript(KUBE_BUILD_SCRIPT);
  const optional = (name: string) => (isExecutable(join(folder, name)) ? join(folder, name) : undefined);
  const controllerManager = optional("kube-controller-manager");
  const scheduler = optional("kube-scheduler");
  const assets = {
    directory: folder,
    kubeApiserver: join(folder, "kube-apiserver"),
    etcd: join(folder, "etcd"),
    ...(controllerManager ? { kubeControllerManager: controllerManager } : {}),
    ...(scheduler ? { kubeScheduler: scheduler } : {}),
  };
  for (const binary of [assets.kubeApiserver, assets.etcd]) {
    requireExecutable(
      binary,
      "run hack/kube/build.sh, or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver and etcd.",
    );
  }
  return assets;
}

/** Asks each binary for its version (`Kubernetes v1.36.3`, `etcd Version: 3.6.8`). */
export function kubeAssetVersions(assets: KubeAssets): KubeAssetVersions {
  const kube = execFileSync(assets.kubeApiserver, ["--version"], { encoding: "utf8" });
  const etcd = execFileSync(assets.etcd, ["--version"], { encoding: "utf8" });
  return {
    kubernetes: kube.match(/v\d+\.\d+\.\d+\S*/)?.[0] ?? kube.trim(),
    etcd: etcd.match(/etcd Version:\s*(\S+)/)?.[1] ?? etcd.split("\n")[0] ?? "",
  };
}
