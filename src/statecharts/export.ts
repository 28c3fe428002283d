/** The files each machine's statechart becomes: Stately JSON, Mermaid and SVG. */
import type { MachineDefinition } from "../machines/shared/machine-definition.ts";
import { statechartOf } from "./graph.ts";
import { toMermaid } from "./mermaid.ts";
import { statelyJson } from "./stately.ts";
import { renderSvg } from "./svg.ts";
import { layoutChart } from "./svg-layout.ts";

/** Where `npm run statecharts` writes, relative to the repository root. */
export const DEFAULT_STATECHARTS_DIRECTORY = "docs/statecharts";

/** The command that regenerates the files, as the files and the staleness test name it. */
export const REGENERATE_COMMAND = "npm run statecharts";

/** One generated file: its name within the output folder and its full content. */
export interface StatechartFile {
  readonly name: string;
  readonly content: string;
}

/** The three files of one machine; the same machine always gives byte-identical files. */
export async function statechartFiles(entry: MachineDefinition): Promise<StatechartFile[]> {
  const chart = statechartOf(entry.machine);
  const { file: name, source } = entry.statechart;
  const title = entry.kind;
  const provenance = `Generated from ${source} by \`${REGENERATE_COMMAND}\`; do not edit.`;
  const layout = await layoutChart(chart);
  return [
    { name: `${name}.json`, content: statelyJson(entry.machine) },
    {
      name: `${name}.mmd`,
      content: toMermaid(chart, { header: `The ${title} statechart. ${provenance}` }),
    },
    {
      name: `${name}.svg`,
      content: renderSvg(layout, { title: `The ${title} statechart`, description: provenance }),
    },
  ];
}

/** The files of every machine in `machines` (the registered kinds' definitions), in order. */
export async function allStatechartFiles(machines: readonly MachineDefinition[]): Promise<StatechartFile[]> {
  const files: StatechartFile[] = [];
  for (const entry of machines) files.push(...(await statechartFiles(entry)));
  return files;
}
