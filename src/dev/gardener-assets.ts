/** Locates (and on first use builds) Gardener's own API server, as hack/gardener/build.sh caches it. */
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { basename, join } from "node:path";

/** The gardener-apiserver binary and the Gardener version it was built from. */
export interface GardenerAssets {
  readonly directory: string;
  readonly apiServer: string;
  readonly version: string;
}

/** The repository's build script; it honours OPENMCP_GARDENER_ASSETS and the per-machine cache. */
export const GARDENER_BUILD_SCRIPT = join(import.meta.dirname, "..", "..", "hack", "gardener", "build.sh");

/**
 * Returns the assets, building them the first time on a machine (Go, from the module proxy; minutes on a
 * cold cache, progress on stderr). Call it from a test's `beforeAll` (or global setup) with a long timeout.
 */
export function findGardenerAssets(): GardenerAssets {
  let output: string;
  try {
    output = execFileSync(GARDENER_BUILD_SCRIPT, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
  } catch (error) {
    throw new Error(`${GARDENER_BUILD_SCRIPT} failed (see its output above): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const directory = output.trim().split("\n").at(-1) ?? "";
  const assets = {
    directory,
    apiServer: join(directory, "gardener-apiserver"),
    version: basename(directory),
  };
  try {
    accessSync(assets.apiServer, constants.X_OK);
  } catch {
    throw new Error(`${assets.apiServer} is missing or not executable; run hack/gardener/build.sh`);
  }
  return assets;
}
