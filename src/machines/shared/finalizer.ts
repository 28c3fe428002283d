/** The one finalizer rule: add ours, remove ours, never touch anyone else's. */

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
