/** Exponential backoff, and the engine's two uses of it, each named for its purpose. */

/** Exponential backoff: `baseMs · 2^(failures-1)`, capped at `maxMs`. */
export interface BackoffOptions {
  readonly baseMs: number;
  readonly maxMs: number;
}

/**
 * Retrying a failed reconcile of one key. controller-runtime's per-item limiter starts at 5 ms too; we
 * cap at 5 minutes (not its 1000 s) so that a backend that has been fixed is noticed soon.
 */
export const RECONCILE_RETRY_BACKOFF: BackoffOptions = { baseMs: 5, maxMs: 5 * 60_000 };

/**
 * Reconnecting a list/watch after an error. Starts slower than a reconcile retry (every cache's watch
 * breaks at once when the API server restarts) and caps at 30 s: a cache must not stay stale for long.
 */
export const WATCH_RECONNECT_BACKOFF: BackoffOptions = { baseMs: 200, maxMs: 30_000 };

/** The delay before retry number `failures` (1 = first retry); 0 for none. */
export function backoffDelay(failures: number, options: BackoffOptions): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 52); // 2^52 ms overflows any sane cap already
  return Math.min(options.maxMs, options.baseMs * 2 ** exponent);
}
