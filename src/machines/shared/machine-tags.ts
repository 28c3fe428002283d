/**
 * What a state means to the runtime, said once on the state as XState tags (read with `snapshot.hasTag`)
 * instead of state-name strings compared in steps: when to look again, and the phase an object shows.
 */
import type { AnyMachineSnapshot } from "xstate";

/** Requeue classes: how soon a state wants another look without any change. */
export const REQUEUE = {
  /** The backend (or target) is working: poll it. */
  poll: "requeue:poll",
  /** At rest: look now and then to notice drift. */
  resync: "requeue:resync",
  /** Waiting for something the engine cannot watch (e.g. a missing profile): retry slowly. */
  retry: "requeue:retry",
} as const;

/** One of {@link REQUEUE}'s keys. */
export type RequeueClass = keyof typeof REQUEUE;

/** The requeue class a snapshot's state carries, if any. */
export function requeueClass(snapshot: AnyMachineSnapshot): RequeueClass | undefined {
  for (const name of Object.keys(REQUEUE) as RequeueClass[]) {
    if (snapshot.hasTag(REQUEUE[name])) return name;
  }
  return undefined;
}

/** Prefix of tags naming the `status.phase` a state shows, e.g. `phase:Granted`. */
export const PHASE_TAG = "phase:";

/** The phase a snapshot's state is tagged with, if any. */
export function taggedPhase(snapshot: AnyMachineSnapshot): string | undefined {
  for (const tag of snapshot.tags) {
    if (tag.startsWith(PHASE_TAG)) return tag.slice(PHASE_TAG.length);
  }
  return undefined;
}

/** How long each requeue class waits. */
export interface RequeueTiming {
  readonly pollMs: number;
  readonly retryMs: number;
  readonly resyncMs: number;
}

/** When to look again, from the requeue class the snapshot's state is tagged with; undefined: wait for a change. */
export function requeueDelay(snapshot: AnyMachineSnapshot, timing: RequeueTiming): number | undefined {
  const wanted = requeueClass(snapshot);
  return wanted === undefined ? undefined : timing[`${wanted}Ms`];
}
