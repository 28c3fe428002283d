/** Locates (and on first use builds) Cluster API's core manager and its CRDs, as hack/capi/build.sh caches them. */
import { join } from "node:path";
import { findBuiltBinary, hackScript, type VersionFolder } from "../util/executables.ts";

/** The manager binary and the folder of its CRDs, in the folder of the Cluster API version they are. */
export interface CapiAssets extends VersionFolder {
  readonly manager: string;
  readonly crdDirectory: string;
}

/** The repository's build script; it honours OPENMCP_CAPI_ASSETS and the per-machine cache. */
export const CAPI_BUILD_SCRIPT = hackScript("capi", "build.sh");

/** Returns the assets, building them the first time on a machine (about two minutes; progress on stderr). */
export function findCapiAssets(): CapiAssets {
  const { binary: manager, ...built } = findBuiltBinary(CAPI_BUILD_SCRIPT, "capi-manager");
  return { ...built, manager, crdDirectory: join(built.directory, "crds") };
}
