/** Locates (and on first use builds) Cluster API's core manager and its CRDs, as hack/capi/build.sh caches them. */
import { basename, join } from "node:path";
import { hackScript, requireExecutable, runBuildScript } from "../util/executables.ts";

/** The manager binary, the folder of its CRDs, and the Cluster API version they are. */
export interface CapiAssets {
  readonly directory: string;
  readonly manager: string;
  readonly crdDirectory: string;
  readonly version: string;
}

/** The repository's build script; it honours OPENMCP_CAPI_ASSETS and the per-machine cache. */
export const CAPI_BUILD_SCRIPT = hackScript("capi", "build.sh");

/** Returns the assets, building them the first time on a machine (about two minutes; progress on stderr). */
export function findCapiAssets(): CapiAssets {
  const directory = runBuildScript(CAPI_BUILD_SCRIPT);
  const manager = join(directory, "capi-manager");
  requireExecutable(manager, "run hack/capi/build.sh");
  return { directory, manager, crdDirectory: join(directory, "crds"), version: basename(directory) };
}
