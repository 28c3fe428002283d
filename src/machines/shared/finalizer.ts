/** The one finalizer rule: add ours, remove ours, never touch anyone else's; and what a step knows of deletion. */
import { whenObserved } from "./observed-guard.ts";

/** What a step knows of its object's deletion, level-based; every kind that sets our finalizer has these facts. */
export interface DeletionFacts {
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
  /** Our finalizer is on the object (so what the engine made for it may still exist). */
  readonly hasFinalizer: boolean;
}

/** The {@link DeletionFacts} of an object with `metadata`, whose finalizer of ours is `finalizer`. */
export function deletionFacts(
  metadata: { readonly deletionTimestamp?: string; readonly finalizers?: readonly string[] },
  finalizer: string,
): DeletionFacts {
  return {
    deleting: metadata.deletionTimestamp !== undefined,
    hasFinalizer: metadata.finalizers?.includes(finalizer) ?? false,
  };
}

/** The predicates over {@link DeletionFacts} machines guard with, by the guard's name. */
export const deletionPredicates = {
  isBeingDeleted: (facts: DeletionFacts) => facts.deleting,
  withoutOurFinalizer: (facts: DeletionFacts) => !facts.hasFinalizer,
} as const;

/** {@link deletionPredicates} as guards of a machine whose facts are `F`; a kind spreads them into its `setup`. */
export function deletionGuards<F extends DeletionFacts>() {
  const when = whenObserved<F>;
  return {
    isBeingDeleted: when(deletionPredicates.isBeingDeleted),
    withoutOurFinalizer: when(deletionPredicates.withoutOurFinalizer),
  };
}

/** What a step wants done with our finalizer. */
export type FinalizerWish = "add" | "remove" | undefined;

/**
 * The finalizer list after `wish` for `name`: `finalizers` itself when nothing changes (so a diff
 * finds nothing), otherwise a new list with ours appended or filtered out; others keep their order.
 */
export function withFinalizer(
  finalizers: readonly string[] | undefined,
  name: string,
  wish: FinalizerWish,
): readonly string[] | undefined {
  const has = finalizers?.includes(name) ?? false;
  if (wish === "add" && !has) return [...(finalizers ?? []), name];
  if (wish === "remove" && has) return (finalizers ?? []).filter((finalizer) => finalizer !== name);
  return finalizers;
}

/** Applies `wish` for `name` to an immer draft's finalizers (left untouched when nothing changes). */
export function applyFinalizerWish(
  draft: { finalizers?: readonly string[] | undefined },
  name: string,
  wish: FinalizerWish,
): void {
  const finalizers = withFinalizer(draft.finalizers, name, wish);
  if (finalizers !== draft.finalizers) draft.finalizers = finalizers ? [...finalizers] : undefined;
}
