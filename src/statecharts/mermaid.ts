/** A statechart as Mermaid `stateDiagram-v2` text: nested states as composite blocks, transitions labelled with event and guard. */
import { commonAncestor, type Statechart, type StatechartState, transitionLabel } from "./graph.ts";

/** What the Mermaid text says about where it comes from. */
export interface MermaidOptions {
  /** A comment line at the top, e.g. which file the chart is generated from. */
  readonly header?: string;
}

const indentUnit = "  ";
const reservedIds = new Set(["state", "note", "end", "direction", "class", "classDef", "style", "click"]);

/**
 * Renders `chart` as `stateDiagram-v2`. Each transition is written in the block of the innermost state that
 * encloses both its ends (Mermaid draws it there); `[*] -->` marks initial states, `--> [*]` final ones, and
 * state descriptions become `%%` comments so that the boxes stay small.
 */
export function toMermaid(chart: Statechart, options: MermaidOptions = {}): string {
  const ids = mermaidIds(chart.states);
  const idOf = (stateId: string) => ids.get(stateId) ?? stateId;
  const lines: string[] = [];
  // The comment goes after the diagram type: tools that sniff the type look at the first line.
  lines.push("stateDiagram-v2");
  if (options.header !== undefined) lines.push(`${indentUnit}%% ${options.header}`);

  const block = (parent: string | undefined, depth: number) => {
    const indent = indentUnit.repeat(depth);
    const children = chart.states.filter((state) => state.parent === parent);
    for (const state of children) {
      if (idOf(state.id) !== state.key)
        lines.push(`${indent}state "${label(state.key)}" as ${idOf(state.id)}`);
      if (state.description !== undefined)
        lines.push(`${indent}%% ${idOf(state.id)}: ${oneLine(state.description)}`);
    }
    for (const state of children.filter((child) => child.initial))
      lines.push(`${indent}[*] --> ${idOf(state.id)}`);
    for (const transition of chart.transitions) {
      if (commonAncestor(chart, transition.source, transition.target) !== parent) continue;
      lines.push(
        `${indent}${idOf(transition.source)} --> ${idOf(transition.target)}: ${label(transitionLabel(transition))}`,
      );
    }
    for (const state of children.filter((child) => child.final))
      lines.push(`${indent}${idOf(state.id)} --> [*]`);
    for (const state of children.filter((child) => child.children.length > 0)) {
      lines.push(`${indent}state ${idOf(state.id)} {`);
      block(state.id, depth + 1);
      lines.push(`${indent}}`);
    }
  };
  block(undefined, 1);
  return `${lines.join("\n")}\n`;
}

/**
 * Mermaid knows every state by one global id: a state's own name where that is unique in the chart and a
 * plain word, else its path joined with `_`.
 */
function mermaidIds(states: readonly StatechartState[]): Map<string, string> {
  const keyCount = new Map<string, number>();
  for (const state of states) keyCount.set(state.key, (keyCount.get(state.key) ?? 0) + 1);
  const plain = (key: string) => /^[A-Za-z_]\w*$/.test(key) && !reservedIds.has(key);
  return new Map(
    states.map((state) => [
      state.id,
      keyCount.get(state.key) === 1 && plain(state.key) ? state.key : `s_${state.id.replace(/\W/g, "_")}`,
    ]),
  );
}

/** Text after `:` runs to the end of the line; `;` and `#` would start statements or entity codes. */
function label(text: string): string {
  return oneLine(text).replaceAll("#", "#35;").replaceAll(";", "#59;").replaceAll('"', "#quot;");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
