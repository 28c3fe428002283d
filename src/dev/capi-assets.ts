/** Locates (and on first use builds) Cluster API's core manager and its CRDs, as hack/capi/build.sh caches them. */
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { basename, join } from "node:path";

/** The manager binary, the folder of its CRDs, and the Cluster API version they are. */
export interface CapiAssets {
  readonly directory: string;
  readonly manager: string;
  readonly crdDirectory: string;
  readonly version: string;
}

/** The repository's build script; it honours OPENMCP_CAPI_ASSETS and the per-machine cache. */
export const CAPI_BUILD_SCRIPT = join(import.meta.dirname, "..", "..", "hack", "capi", "build.sh");

/** Returns the assets, building them the first time on a machine (about two minutes; progress on stderr). */
export function findCapiAssets(): CapiAssets {
  let output: string;
  try {
    output = execFileSync(CAPI_BUILD_SCRIPT, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  } catch (error) {
    throw new Error(`${CAPI_BUILD_SCRIPT} failed (see its output above): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const directory = output.trim().split("\n").at(-1) ?? "";
  const assets = {
    directory,
    manager: join(directory, "capi-manager"),
    crdDirectory: join(directory, "crds"),
    version: basename(directory),
  };
  try {
    accessSync(assets.manager, constants.X_OK);
  } catch {
    throw new Error(`${assets.manager} is missing or not executable; run hack/capi/build.sh`);
  }
  return assets;
}
