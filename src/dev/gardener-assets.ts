/** Locates (and on first use builds) Gardener's own API server, as hack/gardener/build.sh caches it. */
import { findBuiltBinary, hackScript, type VersionFolder } from "../util/executables.ts";

/** The gardener-apiserver binary, in the folder of the Gardener version it was built from. */
export interface GardenerAssets extends VersionFolder {
  readonly apiServer: string;
}

/** The repository's build script; it honours OPENMCP_GARDENER_ASSETS and the per-machine cache. */
export const GARDENER_BUILD_SCRIPT = hackScript("gardener", "build.sh");

/**
 * Returns the assets, building them the first time on a machine (Go, from the module proxy; minutes on a
 * cold cache, progress on stderr). Call it from a test's `beforeAll` (or global setup) with a long timeout.
 */
export function findGardenerAssets(): GardenerAssets {
  const { binary: apiServer, ...built } = findBuiltBinary(GARDENER_BUILD_SCRIPT, "gardener-apiserver");
  return { ...built, apiServer };
}
