/**
 * Locates (and on first use builds) Cluster API's kubeadm control-plane and bootstrap managers and its Docker
 * infrastructure provider (CAPD) with their CRDs, as hack/capi/build-providers.sh caches them.
 */
import { join } from "node:path";
import { hackScript, requireExecutable, runVersionedBuildScript } from "../util/executables.ts";
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
  const built = runVersionedBuildScript(CAPI_PROVIDERS_BUILD_SCRIPT);
  const assetsOf = (provider: CapiProvider): CapiAssets => {
    const manager = join(built.directory, CAPI_PROVIDERS[provider]);
    requireExecutable(manager, "run hack/capi/build-providers.sh");
    return { ...built, manager, crdDirectory: join(built.directory, "crds", CRD_FOLDERS[provider]) };
  };
  return {
    kubeadmControlPlane: assetsOf("kubeadmControlPlane"),
    kubeadmBootstrap: assetsOf("kubeadmBootstrap"),
    docker: assetsOf("docker"),
  };
}
