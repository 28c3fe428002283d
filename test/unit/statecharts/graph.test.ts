/** Reading a statechart out of an XState machine: states with nesting, transitions with event and guard. */
import { describe, expect, it } from "vitest";
import { type AnyStateNode, createMachine } from "xstate";
import { clusterMachine } from "../../../src/machines/cluster/machine.ts";
import { commonAncestor, statechartOf, transitionLabel } from "../../../src/statecharts/graph.ts";

/** Every transition the machine defines, counted straight from its state nodes. */
function transitionCount(node: AnyStateNode): number {
  const own = [...node.transitions.values()].flat().length + (node.always?.length ?? 0);
  return own + Object.values(node.states).reduce((sum, child) => sum + transitionCount(child), 0);
}

describe("statechartOf the Cluster machine", () => {
  const chart = statechartOf(clusterMachine);

  it("lists every state, parents before children, with its nesting", () => {
    expect(chart.id).toBe("cluster");
    expect(chart.states.map((state) => [state.id, state.parent ?? null])).toEqual([
      ["takingOver", null],
      ["pending", null],
      ["claimingPoolMember", null],
      ["provisioning", null],
      ["ready", null],
      ["hibernating", null],
      ["hibernated", null],
      ["waking", null],
      ["updating", null],
      ["failed", null],
      ["deleting", null],
      ["deleting.blocked", "deleting"],
      ["deleting.releasing", "deleting"],
      ["deleting.released", "deleting"],
    ]);
    expect(chart.states.find((state) => state.id === "deleting")?.children).toEqual([
      "deleting.blocked",
      "deleting.releasing",
      "deleting.released",
    ]);
  });

  it("marks the initial states of the machine and of deleting, and the final state", () => {
    expect(chart.states.filter((state) => state.initial).map((state) => state.id)).toEqual([
      "pending",
      "deleting.blocked",
    ]);
    expect(chart.states.filter((state) => state.final).map((state) => state.id)).toEqual([
      "deleting.released",
    ]);
  });

  it("keeps every state's description", () => {
    for (const state of chart.states) {
      const node = clusterMachine.getStateNodeById(`cluster.${state.id}`);
      expect(state.description).toBe(node.description);
      expect(state.description).toMatch(/\.$/);
    }
  });

  it("lists every transition of the machine, eventless ones as always, each with its guard", () => {
    expect(chart.transitions).toHaveLength(transitionCount(clusterMachine.root));
    expect(chart.transitions.filter((t) => t.source === "pending").map(transitionLabel)).toEqual([
      "observed [handoverPending]",
      "always [isBeingDeleted]",
      "always [versionRejected]",
      "always [poolMemberOffered]",
      "always [specAcceptable]",
    ]);
    expect(chart.transitions).toContainEqual({
      source: "provisioning",
      target: "ready",
      event: "always",
      guard: "backendReady",
      reenter: false,
    });
    expect(chart.transitions).toContainEqual({
      source: "deleting.releasing",
      target: "deleting.releasing",
      event: "observed",
      guard: "backendNotDeleting",
      reenter: true,
    });
  });
});

describe("statechartOf other machines", () => {
  it("names delayed and unguarded transitions, inline guards, and points targetless ones at their source", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: {
          after: { 1000: "b" },
          on: {
            poke: { actions: [] },
            go: {
              target: "b",
              guard: function looksGood() {
                return true;
              },
            },
          },
        },
        b: { on: { back: "a" } },
      },
    });
    expect(
      statechartOf(machine).transitions.map((t) => `${t.source} ${transitionLabel(t)} ${t.target}`),
    ).toEqual(["a poke a", "a go [looksGood] b", "a after 1000 b", "b back a"]);
  });
});

describe("commonAncestor", () => {
  const chart = statechartOf(clusterMachine);

  it("is the compound state around two of its children, and undefined at the top", () => {
    expect(commonAncestor(chart, "deleting.blocked", "deleting.released")).toBe("deleting");
    expect(commonAncestor(chart, "deleting.releasing", "deleting.releasing")).toBe("deleting");
    expect(commonAncestor(chart, "pending", "deleting")).toBeUndefined();
    expect(commonAncestor(chart, "deleting.blocked", "pending")).toBeUndefined();
  });
});
