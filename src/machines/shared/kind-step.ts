/**
 * The one pure step every machine-backed kind runs. A kind brings only what is its own (a
 * {@link KindRecipe}): where its state is stored, its facts, what each of its actions means, its
 * status. Everything else is said once, here.
 *
 * Flow: restore the snapshot from the state the object stores → the kind's facts → one `observed`
 * event through `transition()` → the actions, through the kind's action table, into commands, Events
 * and the finalizer wish → the desired metadata (finalizer, `openmcp.cloud/operation: reconcile`
 * removed, the kind's own edits), owned spec fields and status → the requeue delay.
 *
 * Guarantees: pure and deterministic (no clock: `now` is an input, formatted once by the runtime);
 * the state is the machine's state value, the phase the `phase:` tag of the new state, the requeue
 * the delay of its `requeue:` tag (sooner at rest only where the kind's `atRest` says so), never
 * recomputed by hand; a repeated command in one step is ordered once; our finalizer is the only one
 * touched; unchanged parts of the object are returned as they are, so an idle step writes nothing.
 *
 * Assumptions: the machine's only event is `observed` (its guards are {@link whenObserved}), it keeps no
 * context, and its actions are data: `addFinalizer`, `removeFinalizer` and `recordEvent` (params an
 * {@link EventRecord}) mean the same for every kind; every other action must be in the kind's table
 * (checked when the step is made, so a forgotten one fails at load, not in production).
 */
import { type Draft, Immer } from "immer";
import type { AnyStateMachine } from "xstate";
import type { Condition, ObjectMeta } from "../../api/common.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import { applyFinalizerWish, type FinalizerWish } from "./finalizer.ts";
import type { EventRecord, MachineStep } from "./machine-step.ts";
import { type RequeueTiming, requeueClass, requeueDelay, taggedPhase } from "./machine-tags.ts";
import type { ObservedEvent } from "./observed-guard.ts";
import { pureTransition } from "./pure-transition.ts";
import { snapshotRestorer } from "./snapshots.ts";
import { stateValueToString } from "./state-value.ts";

// Drafts never escape a step, so freezing them (immer's default) would only cost time on the hot path.
const { produce } = new Immer({ autoFreeze: false });

/** What every step input carries besides the kind's own fields. */
export interface StepBasics {
  /** The current time, RFC 3339 (formatted once by the runtime), only for condition transition times. */
  readonly now: string;
  /** Message of the last failed command on this object, while its commands keep failing. */
  readonly lastError?: string;
  /** How long each requeue class waits; absent: never look again without a change. */
  readonly timing?: RequeueTiming;
}

/** The {@link StepBasics} of one look: its time, the last error (while commands keep failing), the kind's timing. */
export function stepBasics(
  look: { readonly now: string; readonly lastError?: string | undefined },
  timing: RequeueTiming,
): StepBasics {
  return { now: look.now, ...(look.lastError ? { lastError: look.lastError } : {}), timing };
}

/** The least an object a machine drives has: metadata, and a status that may hold conditions. */
export interface StepObject {
  readonly metadata: ObjectMeta;
  readonly status?: { readonly conditions?: readonly Condition[] } | undefined;
}

/** What an action is translated with: the step's input and the facts the machine was given. */
export interface ActionContext<Input, Facts> {
  readonly input: Input;
  readonly facts: Facts;
}

/** What one of a kind's actions means: the commands it orders (none, one or several). */
export type ActionMeaning<Input, Facts, Command> = (
  params: Readonly<Record<string, unknown>> | undefined,
  context: ActionContext<Input, Facts>,
) => Command | readonly Command[] | undefined;

/** What the transition amounted to: what the kind's metadata, spec, status and Events are made from. */
export interface Transitioned<Input, Facts, Command> extends ActionContext<Input, Facts> {
  /** The state the object stored before the step. */
  readonly previousState: string;
  /** The machine state after the step, as the object will store it (e.g. `deleting.releasing`). */
  readonly state: string;
  /** The `status.phase` the new state is tagged with (`phase:<Phase>`); undefined when it has none. */
  readonly phase: string | undefined;
  readonly finalizer: FinalizerWish;
  readonly commands: readonly Command[];
}

/**
 * The types one kind's step works with, by name: its step input, the object it drives, the facts its
 * machine is given, the commands it orders, its status, and what it derives once per transition for
 * several of its parts (e.g. a condition both its status and an Event use; `undefined` when nothing).
 */
export interface KindTypes {
  readonly input: StepBasics;
  readonly object: StepObject;
  readonly facts: unknown;
  readonly command: unknown;
  readonly status: unknown;
  readonly derived: unknown;
}

/** What the transition amounted to, for the kind `K`. */
type TransitionedOf<K extends KindTypes> = Transitioned<K["input"], K["facts"], K["command"]>;

/** What a kind supplies to the generic step: only its own parts. */
export interface KindRecipe<K extends KindTypes> {
  /** The kind's statechart; its event is `observed` with these facts. */
  readonly machine: AnyStateMachine;
  /** The object a step input is about. */
  object(input: K["input"]): K["object"];
  /** The machine state the object stores: a status field, or read back from what the object shows. */
  readState(object: K["object"]): string;
  /** The facts of the world, level-based: nothing here depends on what happened before. */
  facts(input: K["input"]): K["facts"];
  /** Our finalizer on the kind's objects, which `addFinalizer` and `removeFinalizer` edit. */
  readonly finalizer: string;
  /** What each of the machine's own actions (besides the three shared ones) orders. */
  readonly actions: Readonly<Record<string, ActionMeaning<K["input"], K["facts"], K["command"]>>>;
  /** An Event with what only the step knows (e.g. a denial's reason); default: as the machine says it. */
  event?(record: EventRecord, context: ActionContext<K["input"], K["facts"]>): EventRecord;
  /** What the kind computes once from the transition, for its metadata, spec, status and Events. */
  derive?(transitioned: TransitionedOf<K>): K["derived"];
  /** The kind's own edits of the desired metadata, after the finalizer wish (an immer draft). */
  metadata?(draft: Draft<K["object"]["metadata"]>, transitioned: TransitionedOf<K>): void;
  /** Spec fields the machine owns (written with the metadata; the rest stays the user's); undefined: none. */
  spec?(
    transitioned: TransitionedOf<K>,
    derived: K["derived"],
  ): Readonly<Record<string, unknown>> | undefined;
  /** The status for the new state; unchanged parts keep their values. */
  status(transitioned: TransitionedOf<K>, derived: K["derived"]): K["status"];
  /** Events that are no transition's (e.g. a condition that turned False). */
  moreEvents?(transitioned: TransitionedOf<K>, derived: K["derived"]): readonly EventRecord[];
  /** At rest (`requeue:resync`), look again this soon instead, when it is sooner (e.g. a token's renewal). */
  atRest?(transitioned: TransitionedOf<K>, derived: K["derived"]): number | undefined;
}

/** A step of a kind: what the runtime writes, runs and records, and the event the machine was given. */
export interface KindStep<Obj extends StepObject, Status, Command, Facts>
  extends MachineStep<Obj["metadata"], Status, Command> {
  readonly event: ObservedEvent<Facts>;
}

/** Actions every kind's machine may use, meaning the same everywhere. */
const SHARED_ACTIONS: ReadonlySet<string> = new Set(["addFinalizer", "removeFinalizer", "recordEvent"]);

/**
 * Makes the pure step of the kind `recipe` describes: `(input) → KindStep`. Call once per kind (at
 * load): it prepares the transition and the snapshot cache, and refuses a recipe that leaves one of
 * its machine's actions without a meaning.
 */
export function kindStep<K extends KindTypes>(
  recipe: KindRecipe<K>,
): (input: K["input"]) => KindStep<K["object"], K["status"], K["command"], K["facts"]> {
  type Input = K["input"];
  type Facts = K["facts"];
  type Command = K["command"];
  const machine = recipe.machine;
  const unmeant = Object.keys(machine.implementations.actions).filter(
    (name) => !SHARED_ACTIONS.has(name) && !(name in recipe.actions),
  );
  if (unmeant.length > 0) {
    throw new Error(`machine ${machine.id}: no meaning given for action(s) ${unmeant.join(", ")}`);
  }
  const transition = pureTransition(machine);
  const restore = snapshotRestorer(machine);

  return (input) => {
    const object = recipe.object(input);
    const previousState = recipe.readState(object);
    const facts = recipe.facts(input);
    const event: ObservedEvent<Facts> = { type: "observed", facts };
    const [snapshot, actions] = transition(restore(previousState), event);
    const context: ActionContext<Input, Facts> = { input, facts };

    let finalizer: FinalizerWish;
    const commands: Command[] = [];
    const ordered = new Set<string>();
    const events: EventRecord[] = [];
    for (const action of actions) {
      const type: string = action.type;
      const params = action.params as Readonly<Record<string, unknown>> | undefined;
      if (type === "addFinalizer") finalizer = "add";
      else if (type === "removeFinalizer") finalizer = "remove";
      else if (type === "recordEvent") {
        const record = params as unknown as EventRecord;
        events.push(recipe.event ? recipe.event(record, context) : record);
      } else {
        const meant = recipe.actions[type]?.(params, context);
        for (const command of meant === undefined ? [] : Array.isArray(meant) ? meant : [meant]) {
          // Commands are idempotent: one ordered twice in a step (re-entered states) runs once.
          const key = JSON.stringify(command);
          if (ordered.has(key)) continue;
          ordered.add(key);
          commands.push(command as Command);
        }
      }
    }

    const transitioned: Transitioned<Input, Facts, Command> = {
      input,
      facts,
      previousState,
      state: stateValueToString(snapshot.value),
      phase: taggedPhase(snapshot),
      finalizer,
      commands,
    };
    const derived = recipe.derive?.(transitioned) as K["derived"];
    const metadata = produce(object.metadata, (draft) => {
      applyFinalizerWish(draft, recipe.finalizer, finalizer);
      // Done once a step finds nothing left to do: a step that orders commands keeps it, so that a command that
      // fails (or an engine that dies before running it) leaves the ask standing, as openMCP's platform services
      // expect (they act on `reconcile`, e.g. IPAM's new ClusterConfig patches, and read its removal as done).
      if (commands.length === 0 && draft.annotations?.[ANNOTATIONS.operation] === OPERATIONS.reconcile) {
        delete draft.annotations[ANNOTATIONS.operation];
      }
      recipe.metadata?.(draft as Draft<K["object"]["metadata"]>, transitioned);
    }) as K["object"]["metadata"];
    const spec = recipe.spec?.(transitioned, derived);
    const status = recipe.status(transitioned, derived);
    const transitions = events.length;
    if (recipe.moreEvents) events.push(...recipe.moreEvents(transitioned, derived));

    const timing = input.timing;
    let requeueAfterMs = timing ? requeueDelay(snapshot, timing) : undefined;
    if (requeueAfterMs !== undefined && recipe.atRest && requeueClass(snapshot) === "resync") {
      const sooner = recipe.atRest(transitioned, derived);
      if (sooner !== undefined) requeueAfterMs = Math.min(requeueAfterMs, sooner);
    }
    return {
      previousState,
      event,
      state: transitioned.state,
      desired: { metadata, ...(spec ? { spec } : {}), status },
      commands,
      events,
      transitions,
      requeueAfterMs,
    };
  };
}
