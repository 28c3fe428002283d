/**
 * Set-up file of every heavy test file: waits until the stages of the heavy assets it needs are there (the global
 * setup started building them), then hands the container toolchain on as containers.ts expects it. Run outside the
 * heavy project (no answers named), it does nothing: the file's helpers then find or build what they need themselves.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import { pollUntil } from "../../src/util/poll-until.ts";
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
    const answer = await pollUntil(
      `the heavy assets' ${stage} stage`,
      async () =>
        existsSync(file)
          ? { done: true, value: JSON.parse(readFileSync(file, "utf8")) as StageAnswer }
          : { done: false, why: "still being made" },
      { timeoutMs: Math.max(0, deadline - Date.now()) },
    );
    if ("error" in answer)
      throw new Error(`the heavy assets' ${stage} stage could not be made: ${answer.error}`);
    if (answer.toolchain) process.env[TOOLCHAIN_ENV] = JSON.stringify(answer.toolchain);
  }
}
