/**
 * Set-up file of every heavy test file: waits until the stages of the heavy assets it needs are there (the global
 * setup started building them), then hands the container toolchain on as containers.ts expects it. Run outside the
 * heavy project (no answers named), it does nothing: the file's helpers then find or build what they need themselves.
 */
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { TOOLCHAIN_ENV } from "./containers.ts";
import { HEAVY_ASSETS_ENV, type StageAnswer, stageAnswerFile, stagesNeededBy } from "./heavy-assets.ts";

/** A fresh machine made every stage in 28 minutes on two cores (2026-11-27): room for a slower one. */
const PATIENCE_MS = 100 * 60_000;

const prefix = process.env[HEAVY_ASSETS_ENV];
const testPath = expect.getState().testPath;
if (prefix && testPath) {
  const deadline = Date.now() + PATIENCE_MS;
  for (const stage of stagesNeededBy(testPath)) {
    const file = stageAnswerFile(prefix, stage);
    while (!existsSync(file)) {
      if (Date.now() > deadline)
        throw new Error(
          `the heavy assets' ${stage} stage was not there after ${PATIENCE_MS / 60_000} minutes`,
        );
      await sleep(1_000);
    }
    const answer = JSON.parse(readFileSync(file, "utf8")) as StageAnswer;
    if ("error" in answer)
      throw new Error(`the heavy assets' ${stage} stage could not be made: ${answer.error}`);
    if (answer.toolchain) process.env[TOOLCHAIN_ENV] = JSON.stringify(answer.toolchain);
  }
}
