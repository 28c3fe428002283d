/**
 * The engine's one error policy: what the work queue does with a reconcile that threw. A pure function
 * of the error (and its causes), so every controller's failures are handled alike and the rules can be
 * read, and tested, in one place.
 */
import { findCause, isConflict } from "../../api/error-message.ts";
import { throttledFor } from "../api-server/throttling.ts";
import { ConflictError, heldBackFor, TerminalError } from "./errors.ts";

/** What to do after a failed reconcile. */
export type FailureHandling =
  /**
   * Retry with the key's exponential backoff. `expected`: a conflict (someone wrote first; the retry
   * re-reads), part of normal operation, worth a debug line rather than a warning.
   */
  | { readonly kind: "retry"; readonly expected: boolean }
  /**
   * Not a failure of the reconcile: look again after `ms`, as the API server asked (429, `throttled`)
   * or while the write-loop guard holds the object back (`heldBack`, which has told a person already).
   */
  | { readonly kind: "requeueAfter"; readonly ms: number; readonly reason: "throttled" | "heldBack" }
  /** Retrying cannot help (see {@link TerminalError}): wait until the object changes. */
  | { readonly kind: "terminal" };

/**
 * Classifies `error`: a {@link TerminalError} anywhere in its causes is terminal; a 429 or a held-back
 * write is a requeue after the wait asked for; everything else is retried with backoff (conflicts quietly).
 */
export function classifyFailure(error: unknown): FailureHandling {
  if (findCause(error, (candidate) => candidate instanceof TerminalError)) return { kind: "terminal" };
  const throttledMs = throttledFor(error);
  if (throttledMs !== undefined) return { kind: "requeueAfter", ms: throttledMs, reason: "throttled" };
  const holdMs = heldBackFor(error);
  if (holdMs !== undefined) return { kind: "requeueAfter", ms: holdMs, reason: "heldBack" };
  const conflict = findCause(error, (candidate) => candidate instanceof ConflictError) !== undefined;
  return { kind: "retry", expected: conflict || isConflict(error) };
}
