/**
 * The runtime's error classes, in one place: the files that throw them and the error policy that reads
 * them both import from here, so no thrower depends on the policy nor the policy on a thrower.
 */
import { findCause } from "../../api/error-message.ts";

/**
 * An error that retrying cannot fix (e.g. a write the API server refuses as invalid, see
 * `classifyPatchError`): the queue logs it and does not retry; a later change of the object (or of
 * what wakes its key) triggers a new reconcile.
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** The object changed since it was read (409, or the resourceVersion test failed): re-read and try again. */
export class ConflictError extends Error {
  override readonly name = "ConflictError";
}

/** The object no longer exists (404): nothing to patch. */
export class GoneError extends Error {
  override readonly name = "GoneError";
}

/** A write was refused because the object is held back after a write loop; retry after `retryAfterMs`. */
export class WriteLoopError extends Error {
  override readonly name = "WriteLoopError";
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** How long `error` (or one of its causes) asks to hold back, if it is a {@link WriteLoopError}. */
export function heldBackFor(error: unknown): number | undefined {
  return findCause(error, (candidate) => candidate instanceof WriteLoopError)?.retryAfterMs;
}
