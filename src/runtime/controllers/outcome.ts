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
