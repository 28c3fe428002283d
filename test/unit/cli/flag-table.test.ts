/** One table per command's flags: the parser's options and the usage text both come from it. */
import { describe, expect, it } from "vitest";
import { type FlagSpec, flagUsage, parseOptions } from "../../../src/cli/flags.ts";
import { ENGINE_FLAGS, engineFlagOptions, runUsage } from "../../../src/cli/run.ts";

const table: readonly FlagSpec[] = [
  { name: "short", type: "string", help: { label: "--short <v>", lines: ["first line", "second line"] } },
  {
    name: "a-rather-long-flag",
    type: "string",
    help: { label: "--a-rather-long-flag <v>", lines: ["said"] },
  },
  {
    name: "alone",
    type: "boolean",
    help: { label: "--alone / --no-alone", labelAlone: true, lines: ["below"] },
  },
  { name: "quiet", type: "string" },
  { name: "many", type: "string", multiple: true },
];

describe("flagUsage", () => {
  it("lines descriptions up after the labels, and a wider label keeps two spaces", () => {
    expect(flagUsage(table, 16).split("\n")).toEqual([
      "  --short <v>     first line",
      "                  second line",
      "  --a-rather-long-flag <v>  said",
      "  --alone / --no-alone",
      "                  below",
    ]);
  });
});

describe("parseOptions", () => {
  it("gives the parser every flag of the table, told or not", () => {
    expect(parseOptions(table)).toEqual({
      short: { type: "string" },
      "a-rather-long-flag": { type: "string" },
      alone: { type: "boolean" },
      quiet: { type: "string" },
      many: { type: "string", multiple: true },
    });
  });
});

describe("the engine's flags", () => {
  it("parses exactly the flags of the table", () => {
    expect(Object.keys(engineFlagOptions).sort()).toEqual(ENGINE_FLAGS.map((flag) => flag.name).sort());
  });

  it("tells every flag in run's usage, those without a line of their own beside another", () => {
    for (const flag of ENGINE_FLAGS) expect(runUsage).toContain(`--${flag.name}`);
  });
});
