/**
 * Kinds whose object stores its machine state in `status.state` (Rollout, ClusterSnapshot, the schedules, the
 * Cluster API–owned objects): how that state is read back, and their step, the generic {@link kindStep} with
 * the object and its state said once.
 */
import type { AnyStateMachine } from "xstate";
import { type KindRecipe, type KindStep, kindStep, type StepBasics, type StepObject } from "./kind-step.ts";

/** An object that stores its machine state in `status.state`. */
export interface StoredStateObject extends StepObject {
  readonly status?: (StepObject["status"] & { readonly state?: string }) | undefined;
}

/** Reads the machine state an object stores in `status.state`; `initial` before its first step (or for no name). */
export function storedState(
  initial: string,
): (object: { readonly status?: { readonly state?: string } | undefined }) => string {
  return (object) => {
    const state = object.status?.state;
    return typeof state === "string" && state !== "" ? state : initial;
  };
}

/** The state a machine starts in: where an object that stores none yet stands. */
function initialStateOf(machine: AnyStateMachine): string {
  const initial = machine.config.initial;
  if (typeof initial !== "string") throw new Error(`machine ${machine.id}: its initial state is not a name`);
  return initial;
}

/** The status of a step input's object, as its step writes it. */
type StatusOf<Input extends { readonly object: StoredStateObject }> = NonNullable<Input["object"]["status"]>;

/** The types of a kind whose input carries its object as `object`, its status that object's. */
interface StoredStateKind<
  Input extends StepBasics & { readonly object: StoredStateObject },
  Facts,
  Command,
  Derived,
> {
  input: Input;
  object: Input["object"];
  facts: Facts;
  command: Command;
  status: StatusOf<Input>;
  derived: Derived;
}

/**
 * The step of a kind whose input carries its object as `object`, which stores its machine state in `status.state`
 * (the machine's initial state before the first step): the recipe brings everything else.
 */
export function storedStateStep<
  Input extends StepBasics & { readonly object: StoredStateObject },
  Facts,
  Command,
  Derived = undefined,
>(
  recipe: Omit<KindRecipe<StoredStateKind<Input, Facts, Command, Derived>>, "object" | "readState">,
): (input: Input) => KindStep<Input["object"], StatusOf<Input>, Command, Facts> {
  return kindStep<StoredStateKind<Input, Facts, Command, Derived>>({
    ...recipe,
    object: (input) => input.object,
    readState: storedState(initialStateOf(recipe.machine)),
  });
}
