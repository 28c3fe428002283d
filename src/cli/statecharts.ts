/** `openmcp-engine statecharts`: writes each machine's statechart as Stately JSON, Mermaid and SVG. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { MACHINE_KINDS } from "../runtime/kinds/registry.ts";
import { allStatechartFiles, DEFAULT_STATECHARTS_DIRECTORY } from "../statecharts/export.ts";
import { UsageError } from "./usage-error.ts";

export const statechartsUsage = `Usage: openmcp-engine statecharts [--out <dir>]

Writes the statechart of each machine (${MACHINE_KINDS.map((kind) => kind.definition.statechart.file).join(", ")}) as three files:
<name>.json (the config, for Stately Studio), <name>.mmd (Mermaid stateDiagram-v2) and <name>.svg (a picture).

Flags:
  --out <dir>    the folder to write to (default: ${DEFAULT_STATECHARTS_DIRECTORY})
  -h, --help     show this help`;

/** Runs the subcommand; prints the files it wrote. */
export async function statecharts(args: string[]): Promise<void> {
  let out: string;
  try {
    const { values } = parseArgs({
      args,
      options: { out: { type: "string" } },
      strict: true,
      allowPositionals: false,
    });
    out = values.out ?? DEFAULT_STATECHARTS_DIRECTORY;
  } catch (error) {
    throw new UsageError((error as Error).message, statechartsUsage);
  }
  const directory = resolve(out);
  mkdirSync(directory, { recursive: true });
  for (const file of await allStatechartFiles(MACHINE_KINDS.map((kind) => kind.definition))) {
    const path = join(directory, file.name);
    writeFileSync(path, file.content);
    console.log(`wrote ${relative(process.cwd(), path) || path}`);
  }
}
