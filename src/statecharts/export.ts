/** The machines whose statecharts are exported, and the files each one becomes: Stately JSON, Mermaid and SVG. */
import type { AnyStateMachine } from "xstate";
import { accessRequestMachine } from "../machines/access-request/machine.ts";
import { clusterMachine } from "../machines/cluster/machine.ts";
import { statechartOf } from "./graph.ts";
import { toMermaid } from "./mermaid.ts";
import { statelyJson } from "./stately.ts";
import { renderSvg } from "./svg.ts";
import { layoutChart } from "./svg-layout.ts";

/** One machine to export. */
export interface ExportedMachine {
  /** File name stem: `cluster` gives cluster.json, cluster.mmd, cluster.svg. */
  readonly name: string;
  /** What the machine is called in prose ("the Cluster statechart"). */
  readonly title: string;
  /** The file that defines it, named in the generated files. */
  readonly source: string;
  readonly machine: AnyStateMachine;
}

/** Every exported machine: one line each. */
export const EXPORTED_MACHINES: readonly ExportedMachine[] = [
  { name: "cluster", title: "Cluster", source: "src/machines/cluster/machine.ts", machine: clusterMachine },
  {
    name: "accessRequest",
    title: "AccessRequest",
    source: "src/machines/access-request/machine.ts",
    machine: accessRequestMachine,
  },
];

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
export async function statechartFiles(entry: ExportedMachine): Promise<StatechartFile[]> {
  const chart = statechartOf(entry.machine);
  const provenance = `Generated from ${entry.source} by \`${REGENERATE_COMMAND}\`; do not edit.`;
  const layout = await layoutChart(chart);
  return [
    { name: `${entry.name}.json`, content: statelyJson(entry.machine) },
    {
      name: `${entry.name}.mmd`,
      content: toMermaid(chart, { header: `The ${entry.title} statechart. ${provenance}` }),
    },
    {
      name: `${entry.name}.svg`,
      content: renderSvg(layout, { title: `The ${entry.title} statechart`, description: provenance }),
    },
  ];
}

/** The files of every machine in `machines`, in order. */
export async function allStatechartFiles(
  machines: readonly ExportedMachine[] = EXPORTED_MACHINES,
): Promise<StatechartFile[]> {
  const files: StatechartFile[] = [];
  for (const entry of machines) files.push(...(await statechartFiles(entry)));
  return files;
}
