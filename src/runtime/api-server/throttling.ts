/**
 * API Priority and Fairness: an API server that is busy answers 429 Too Many Requests with a
 * Retry-After. That is not a failure of the reconcile: it is waited out (no backoff, no error metric).
 */
import { ApiException } from "@kubernetes/client-node";
import { findCause } from "../../api/error-message.ts";

/** When a 429 names no Retry-After, look again after this long. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
/** Retry-After values beyond this are capped: a resync or a watch event will come sooner anyway. */
const MAX_RETRY_AFTER_MS = 60_000;

/** How long the API server asked us to wait, if `error` (or one of its causes) is a 429; else undefined. */
export function throttledFor(error: unknown): number | undefined {
  const tooMany = findCause(
    error,
    (candidate): candidate is ApiException<unknown> =>
      candidate instanceof ApiException && candidate.code === 429,
  );
  if (!tooMany) return undefined;
  const headers = (tooMany.headers ?? {}) as Record<string, string>;
  const header = Object.entries(headers).find(([name]) => name.toLowerCase() === "retry-after")?.[1];
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) && seconds > 0 ? seconds * 1_000 : DEFAULT_RETRY_AFTER_MS;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}
