/** xstate's pure `transition()`, minus the throwaway actor it builds on every call. */
import {
  type ActionExecutor,
  type AnyActorScope,
  type AnyStateMachine,
  createActor,
  type EventFromLogic,
  type ExecutableActionsFrom,
  type SnapshotFrom,
  transition,
} from "xstate";

/** A `transition(snapshot, event)` for one machine, returning the next snapshot and the actions, like xstate's. */
export type PureTransition<M extends AnyStateMachine> = (
  snapshot: SnapshotFrom<M>,
  event: EventFromLogic<M>,
) => [SnapshotFrom<M>, ExecutableActionsFrom<M>[]];

/**
 * Returns a transition function for `machine` that gives the same result as xstate's `transition()`.
 *
 * Why: `transition()` creates a new inert actor per call, which computes the machine's initial snapshot
 * each time — about 40% of a reconcile step. Here one never-started actor supplies the scope, and
 * `machine.transition` (the documented ActorLogic method) does the work; the action executor only
 * collects, so nothing runs. Caveat: valid for machines without invoked or spawned actors (ours have
 * none by design); `test/unit/machines/shared/pure-transition.test.ts` checks equality with `transition()`.
 */
export function pureTransition<M extends AnyStateMachine>(machine: M): PureTransition<M> {
  const inert = createActor(machine);
  let collected: ExecutableActionsFrom<M>[] = [];
  const collect: ActionExecutor = (action) => {
    collected.push(action as ExecutableActionsFrom<M>);
  };
  const scope: AnyActorScope = {
    self: inert,
    id: inert.id,
    sessionId: inert.sessionId,
    logger: () => {},
    defer: () => {},
    emit: () => {},
    system: inert.system,
    stopChild: () => {},
    actionExecutor: collect,
  };
  return (snapshot, event) => {
    collected = [];
    const next = machine.transition(snapshot, event, scope) as SnapshotFrom<M>;
    return [next, collected];
  };
}

/** xstate's own `transition()`, re-exported for comparison in tests. */
export const referenceTransition = transition;
