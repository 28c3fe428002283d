/** Machine snapshots rebuilt from the state an object stores, one per state value, shared by every object. */
import type { AnyMachineSnapshot, AnyStateMachine } from "xstate";
import { parseStateValue } from "./state-value.ts";

/**
 * Returns `restore(state)` for `machine`: the snapshot of the persisted state (`deleting.releasing`).
 * Snapshots are immutable and our machines keep no context, so one per state serves every object.
 * An unknown value (a hand-edited status) restores the machine's initial state.
 */
export function snapshotRestorer(machine: AnyStateMachine): (state: string) => AnyMachineSnapshot {
  const snapshots = new Map<string, AnyMachineSnapshot>();
  const initial = String(machine.config.initial);
  const restore = (state: string): AnyMachineSnapshot => {
    let snapshot = snapshots.get(state);
    if (!snapshot) {
      try {
        snapshot = machine.resolveState({ value: parseStateValue(state), context: {} });
      } catch {
        return state === initial ? machine.resolveState({ value: initial, context: {} }) : restore(initial);
      }
      snapshots.set(state, snapshot);
    }
    return snapshot;
  };
  return restore;
}
