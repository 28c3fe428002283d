/** The committed statechart files match the machines, and the Stately JSON is a complete config. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { MACHINE_KINDS } from "../../../src/runtime/kinds/registry.ts";
import {
  allStatechartFiles,
  DEFAULT_STATECHARTS_DIRECTORY,
  REGENERATE_COMMAND,
} from "../../../src/statecharts/export.ts";

const EXPORTED_MACHINES = MACHINE_KINDS.map((kind) => ({
  name: kind.definition.statechart.file,
  machine: kind.definition.machine,
}));

import { statechartOf } from "../../../src/statecharts/graph.ts";

const root = join(import.meta.dirname, "..", "..", "..");

describe("the exported statecharts", () => {
  it("are committed as generated from the machines, byte for byte", async () => {
    const files = await allStatechartFiles(MACHINE_KINDS.map((kind) => kind.definition));
    expect(files.map((file) => file.name)).toEqual(
      EXPORTED_MACHINES.flatMap((entry) =>
        ["json", "mmd", "svg"].map((extension) => `${entry.name}.${extension}`),
      ),
    );
    for (const file of files) {
      const path = join(DEFAULT_STATECHARTS_DIRECTORY, file.name);
      const committed = existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : undefined;
      expect(committed, `${path} is stale: run \`${REGENERATE_COMMAND}\` and commit the result`).toBe(
        file.content,
      );
    }
  });

  it("name each machine once, after its id", () => {
    const names = EXPORTED_MACHINES.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of EXPORTED_MACHINES) expect(entry.machine.id).toBe(entry.name);
  });

  it("give a JSON config from which XState builds the same chart", async () => {
    const files = await allStatechartFiles(MACHINE_KINDS.map((kind) => kind.definition));
    for (const entry of EXPORTED_MACHINES) {
      const json = files.find((file) => file.name === `${entry.name}.json`)?.content ?? "";
      const rebuilt = createMachine(JSON.parse(json));
      expect(statechartOf(rebuilt)).toEqual(statechartOf(entry.machine));
    }
  });
});
