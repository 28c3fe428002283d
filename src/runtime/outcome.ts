/** What a reconcile asks of the work queue: wait for the next change, or look again after a delay. */

/** The result of one reconcile. Errors are thrown, not returned: the error policy (`error-policy.ts`) says what follows. */
export type Outcome =
  | { readonly kind: "awaitChange" }
  | { readonly kind: "requeueAfter"; readonly ms: number };

/** Constructors of {@link Outcome}, the one way to express each. */
export const Outcome = {
  /** Nothing to do until the object (or something it watches) changes. */
  awaitChange: (): Outcome => ({ kind: "awaitChange" }),
  /** Reconcile again after `ms` milliseconds even if nothing changes (e.g. to poll a backend). */
  requeueAfter: (ms: number): Outcome => ({ kind: "requeueAfter", ms: Math.max(0, Math.round(ms)) }),
} as const;

/**
 * An error that retrying cannot fix (e.g. a write the API server refuses as invalid, see
 * `classifyPatchError`): the queue logs it and does not retry; a later change of the object (or of
 * what wakes its key) triggers a new reconcile.
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}
