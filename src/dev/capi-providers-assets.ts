/**
 * Locates (and on first use builds) Cluster API's kubeadm control-plane and bootstrap managers and its Docker
 * infrastructure provider (CAPD) with their CRDs, as hack/capi/build-providers.sh caches them.
 */
import { basename, join } from "node:path";
import { hackScript, requireExecutable, runBuildScript } from "../util/executables.ts";
import type { CapiAssets } from "./capi-assets.ts";

/** The providers the script builds, by the name their manager binary has. */
export const CAPI_PROVIDERS = {
  kubeadmControlPlane: "kubeadm-control-plane-manager",
  kubeadmBootstrap: "kubeadm-bootstrap-manager",
  docker: "docker-infrastructure-manager",
} as const;

/** Which of {@link CAPI_PROVIDERS}. */
export type CapiProvider = keyof typeof CAPI_PROVIDERS;

/** Each provider's CRD folder under `crds/`. */
const CRD_FOLDERS: Readonly<Record<CapiProvider, string>> = {
  kubeadmControlPlane: "kubeadm-control-plane",
  kubeadmBootstrap: "kubeadm-bootstrap",
  docker: "docker",
};

/** The repository's build script; it honours OPENMCP_CAPI_PROVIDERS_ASSETS and the per-machine cache. */
export const CAPI_PROVIDERS_BUILD_SCRIPT = hackScript("capi", "build-providers.sh");

/**
 * Each provider's manager and CRD folder, in the shape the core manager's assets have (so one launcher,
 * `startCapiManager`, runs them all). Builds them the first time on a machine (progress on stderr).
 */
export function findCapiProvidersAssets(): Readonly<Record<CapiProvider, CapiAssets>> {
  const directory = runBuildScript(CAPI_PROVIDERS_BUILD_SCRIPT);
  const version = basename(directory);
  const assetsOf = (provider: CapiProvider): CapiAssets => {
    const manager = join(directory, CAPI_PROVIDERS[provider]);
    requireExecutable(manager, "run hack/capi/build-providers.sh");
    return { directory, manager, crdDirectory: join(directory, "crds", CRD_FOLDERS[provider]), version };
  };
  return {
    kubeadmControlPlane: assetsOf("kubeadmControlPlane"),
    kubeadmBootstrap: assetsOf("kubeadmBootstrap"),
    docker: assetsOf("docker"),
  };
}
