/** Which of the engine's V8 flags a start still lacks: a user's own setting, in either spelling, wins. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  COMPILE_CACHE_DIRECTORY,
  ENGINE_V8_FLAGS,
  engineEnvironment,
  missingV8Flags,
} from "../../../../src/runtime/start/v8-flags.ts";

describe("missingV8Flags", () => {
  it.each([
    { argv: [], nodeOptions: "" },
    { argv: ["--enable-source-maps"], nodeOptions: undefined },
  ])(
    "asks for every flag where node was started plainly: $argv, NODE_OPTIONS $nodeOptions",
    ({ argv, nodeOptions }) => {
      expect(missingV8Flags(argv, nodeOptions)).toEqual(ENGINE_V8_FLAGS);
    },
  );

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

describe("setLateV8Flags", () => {
  /** What a fresh node started with `flags` reports: the flags set late, twice, and what is still missing. */
  const lateIn = (flags: readonly string[]) => {
    const module = pathToFileURL(join(import.meta.dirname, "../../../../src/runtime/start/v8-flags.ts")).href;
    const script = `
      const { setLateV8Flags, v8FlagsStillMissing } = await import(${JSON.stringify(module)});
      console.log(JSON.stringify([setLateV8Flags(), setLateV8Flags(), v8FlagsStillMissing(process.execArgv, "")]));`;
    const out = execFileSync(process.execPath, [...flags, "--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    return JSON.parse(out) as [string[], string[], string[]];
  };

  it("sets --optimize-for-size once in a process started without it, and counts it as given from then on", () => {
    expect(lateIn([])).toEqual([
      ["--optimize-for-size"],
      [],
      ["--max-semi-space-size=2", "--max-old-space-size=256"],
    ]);
  });

  it("leaves a process alone whose command line says either way", () => {
    expect(lateIn(["--optimize-for-size"])[0]).toEqual([]);
    expect(lateIn(["--no-optimize-for-size"])[0]).toEqual([]);
  });
});
