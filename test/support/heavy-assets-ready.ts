/**
 * Set-up file of every heavy test file: waits until the heavy assets the global setup started building are
 * there, then hands the container toolchain on as containers.ts expects it. Run outside the heavy project
 * (no answer file named), it does nothing: the file's helpers then find or build what they need themselves.
 */
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { TOOLCHAIN_ENV } from "./containers.ts";
import { HEAVY_ASSETS_ENV, type HeavyAssets } from "./heavy-assets.ts";

/** A fresh machine builds Gardener, Cluster API and the images in about an hour on two cores. */
const PATIENCE_MS = 100 * 60_000;

const answer = process.env[HEAVY_ASSETS_ENV];
if (answer && !process.env[TOOLCHAIN_ENV]) {
  const deadline = Date.now() + PATIENCE_MS;
  while (!existsSync(answer)) {
    if (Date.now() > deadline)
      throw new Error(`the heavy assets were not ready after ${PATIENCE_MS / 60_000} minutes`);
    await sleep(1_000);
  }
  const assets = JSON.parse(readFileSync(answer, "utf8")) as HeavyAssets;
  if ("error" in assets) throw new Error(`the heavy assets could not be made: ${assets.error}`);
  process.env[TOOLCHAIN_ENV] = JSON.stringify(assets.toolchain);
}
