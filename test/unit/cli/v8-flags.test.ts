/** Which of the engine's V8 flags a start still lacks: a user's own setting, in either spelling, wins. */
import { describe, expect, it } from "vitest";
import {
  COMPILE_CACHE_DIRECTORY,
  ENGINE_V8_FLAGS,
  engineEnvironment,
  missingV8Flags,
} from "../../../src/cli/v8-flags.ts";

describe("missingV8Flags", () => {
  it("asks for every flag where node was started plainly", () => {
    expect(missingV8Flags([], "")).toEqual(ENGINE_V8_FLAGS);
    expect(missingV8Flags(["--enable-source-maps"], undefined)).toEqual(ENGINE_V8_FLAGS);
  });

  it("leaves out what the command line or NODE_OPTIONS sets, whatever the value or spelling", () => {
    expect(missingV8Flags(["--max-old-space-size=4096", "--optimize-for-size"], "")).toEqual([
      "--max-semi-space-size=2",
    ]);
    expect(
      missingV8Flags([], "--max_semi_space_size=16  --max-old-space-size=512 --optimize_for_size"),
    ).toEqual([]);
    expect(missingV8Flags(["--max-semi-space-size=2"], "--trace-gc --no-optimize-for-size")).toEqual([
      "--max-old-space-size=256",
    ]);
  });
});

describe("engineEnvironment", () => {
  it("keeps Node's compile cache for a start from the TypeScript sources", () => {
    expect(engineEnvironment({ HOME: "/h" }, true)).toEqual({
      HOME: "/h",
      NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY,
    });
  });

  it("leaves compiled JavaScript, and a user's own cache setting, as they are", () => {
    const env = { HOME: "/h" };
    expect(engineEnvironment(env, false)).toBe(env);
    const own = { NODE_COMPILE_CACHE: "/mine" };
    expect(engineEnvironment(own, true)).toBe(own);
    const off = { NODE_DISABLE_COMPILE_CACHE: "1" };
    expect(engineEnvironment(off, true)).toBe(off);
  });
});
