/** The Mermaid text of a statechart: every state and transition, nested blocks, initial and final markers. */
import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import { clusterMachine } from "../../../src/machines/cluster/machine.ts";
import { statechartOf, transitionLabel } from "../../../src/statecharts/graph.ts";
import { toMermaid } from "../../../src/statecharts/mermaid.ts";

describe("toMermaid of the Cluster machine", () => {
  const chart = statechartOf(clusterMachine);
  const text = toMermaid(chart, { header: "The Cluster statechart." });
  const lines = text.split("\n").map((line) => line.trim());

  it("is a stateDiagram-v2 with the header as its first comment, ending in a newline", () => {
    expect(text.split("\n").slice(0, 2)).toEqual(["stateDiagram-v2", "  %% The Cluster statechart."]);
    expect(text.endsWith("}\n")).toBe(true);
  });

  it("writes every transition as `source --> target: event [guard]`", () => {
    const key = (id: string) => id.split(".").at(-1);
    for (const t of chart.transitions) {
      expect(lines).toContain(`${key(t.source)} --> ${key(t.target)}: ${transitionLabel(t)}`);
    }
    expect(lines.filter((line) => /^\w+ --> \w+: /.test(line))).toHaveLength(chart.transitions.length);
    expect(lines).toContain("provisioning --> ready: always [backendReady]");
  });

  it("names every state", () => {
    for (const state of chart.states) expect(text).toMatch(new RegExp(`\\b${state.key}\\b`));
  });

  it("nests the children of deleting in its block, with their initial and final markers", () => {
    const block = text.slice(text.indexOf("  state deleting {"), text.lastIndexOf("}") + 1).split("\n");
    expect(block.map((line) => line.trim())).toEqual([
      "state deleting {",
      "%% blocked: Others still hold finalizers on the Cluster; its infrastructure must stay.",
      "%% releasing: The backend deletes the cluster; we wait until it reports it gone.",
      "%% released: Nothing is left at the backend; our finalizer goes.",
      "[*] --> blocked",
      "blocked --> released: always [withoutOurFinalizer]",
      "blocked --> releasing: always [noForeignFinalizers]",
      "releasing --> released: observed [backendAbsent]",
      "releasing --> releasing: observed [backendNotDeleting]",
      "released --> [*]",
      "}",
    ]);
    expect(block.slice(1, -1).every((line) => line.startsWith("    "))).toBe(true);
    expect(lines.indexOf("[*] --> pending")).toBeLessThan(lines.indexOf("state deleting {"));
  });

  it("is the same text every time", () => {
    expect(toMermaid(statechartOf(clusterMachine), { header: "The Cluster statechart." })).toBe(text);
  });
});

describe("toMermaid of other machines", () => {
  it("gives states that share a name distinct ids, and escapes what Mermaid would misread", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: { initial: "idle", states: { idle: { on: { "go;now": "#m.b.idle" } } } },
        b: { initial: "idle", states: { idle: {} } },
      },
    });
    const text = toMermaid(statechartOf(machine));
    expect(text).toContain('state "idle" as s_a_idle');
    expect(text).toContain('state "idle" as s_b_idle');
    expect(text).toContain("  s_a_idle --> s_b_idle: go#59;now\n");
  });
});
