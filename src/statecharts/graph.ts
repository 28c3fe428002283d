/** A neutral graph of a statechart (states with nesting, transitions with event and guard), read from an XState machine. */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";

/** One state of the chart. */
export interface StatechartState {
  /** Unique within the chart: the path from the root, dot-separated (`deleting.blocked`). */
  readonly id: string;
  /** The state's own name (`blocked`). */
  readonly key: string;
  /** The id of the enclosing state; `undefined` for the top-level states. */
  readonly parent: string | undefined;
  /** The ids of the child states, in the order of the config. */
  readonly children: readonly string[];
  /** The state its parent (or the machine) enters first. */
  readonly initial: boolean;
  /** A final state (`type: "final"`). */
  readonly final: boolean;
  /** The state's `description`, if it has one. */
  readonly description: string | undefined;
}

/** One transition: an event (or `always`) with an optional named guard, from one state to another. */
export interface StatechartTransition {
  /** Id of the state that declares the transition. */
  readonly source: string;
  /** Id of the state it goes to; the source itself for a targetless transition. */
  readonly target: string;
  /** The event type; `always` for an eventless transition, `after <delay>` for a delayed one. */
  readonly event: string;
  /** The guard's name; `undefined` when the transition is unguarded. */
  readonly guard: string | undefined;
  /** The target is re-entered (its exit and entry actions run again) even if it is the source. */
  readonly reenter: boolean;
}

/** A statechart as plain data: what the Mermaid and SVG renderers draw. */
export interface Statechart {
  /** The machine's id. */
  readonly id: string;
  /** Every state except the machine's root, parents before their children, in the order of the config. */
  readonly states: readonly StatechartState[];
  /** Every transition, grouped by source state in the order of {@link states}; per state in the order XState tries them. */
  readonly transitions: readonly StatechartTransition[];
}

/** Reads the chart of `machine` from its state nodes (not from its config, so shorthands are resolved). */
export function statechartOf(machine: AnyStateMachine): Statechart {
  const states: StatechartState[] = [];
  const transitions: StatechartTransition[] = [];
  const visit = (node: AnyStateNode, parent: AnyStateNode | undefined) => {
    const children = Object.values(node.states) as AnyStateNode[];
    if (parent !== undefined) {
      const id = stateId(node);
      states.push({
        id,
        key: node.key,
        parent: parent === machine.root ? undefined : stateId(parent),
        children: children.map(stateId),
        initial: parent.initial?.target.includes(node) ?? false,
        final: node.type === "final",
        description: node.description,
      });
      const own = [...node.transitions.values()].flat().concat(node.always ?? []);
      for (const transition of own) transitions.push(...transitionsOf(transition, id));
    }
    for (const child of children) visit(child, node);
  };
  visit(machine.root, undefined);
  return { id: machine.id, states, transitions };
}

/** A state node's id within the chart: its path from the root. */
function stateId(node: AnyStateNode): string {
  return node.path.join(".");
}

/** One edge per target (a transition into parallel regions has several). */
function transitionsOf(transition: AnyTransitionDefinition, source: string): StatechartTransition[] {
  const targets = transition.target?.length ? transition.target.map(stateId) : [source];
  return targets.map((target) => ({
    source,
    target,
    event: eventName(transition.eventType),
    guard: guardName(transition.guard),
    reenter: transition.reenter,
  }));
}

/** `always` for eventless transitions, `after <delay>` for delayed ones, else the event type. */
function eventName(eventType: string): string {
  if (eventType === "") return "always";
  const delayed = /^xstate\.after\.([^.]+)\./.exec(eventType);
  return delayed ? `after ${delayed[1]}` : eventType;
}

/** The name the chart refers to a guard by: a string, `{ type }`, or the name of an inline function. */
function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === "string") return guard;
  if (typeof guard === "object" && guard !== null && typeof (guard as { type?: unknown }).type === "string") {
    return (guard as { type: string }).type;
  }
  if (typeof guard === "function" && guard.name !== "") return guard.name;
  return "inline guard";
}

/** The label of a transition as the pictures show it: `always [backendReady]`, `observed`. */
export function transitionLabel(transition: StatechartTransition): string {
  return transition.guard === undefined ? transition.event : `${transition.event} [${transition.guard}]`;
}

/** The innermost state enclosing both states (neither counts as enclosing itself); `undefined` when only the machine does. */
export function commonAncestor(chart: Statechart, a: string, b: string): string | undefined {
  const parentOf = new Map(chart.states.map((state) => [state.id, state.parent]));
  const ancestors = (id: string) => {
    const chain: string[] = [];
    for (let parent = parentOf.get(id); parent !== undefined; parent = parentOf.get(parent))
      chain.push(parent);
    return chain;
  };
  const ofB = new Set(ancestors(b));
  return ancestors(a).find((id) => ofB.has(id));
}
