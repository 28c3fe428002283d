/** The one way tests wait: retry a probe or an assertion until it passes, then fail saying what was awaited. */
import { setTimeout as sleep } from "node:timers/promises";
import { pace } from "./pace.ts";

/** How long and how often {@link eventually} tries. */
export interface EventuallyOptions {
  /** What is awaited, for the failure message ("the Cluster Ready"); default: the probe's source. */
  readonly what?: string;
  /** Give up after this long on an idle machine (default 30 s); scaled by the machine's pace now (pace.ts). */
  readonly timeoutMs?: number;
  /** Pause between tries. Default 100 ms. */
  readonly intervalMs?: number;
}

/** Thrown when {@link eventually} gives up; `cause` is the last failure. */
export class NeverHappenedError extends Error {
  override readonly name = "NeverHappenedError";
}

/**
 * Calls `probe` until it passes and resolves to what it returned. It passes when it neither throws
 * (e.g. an `expect` inside) nor returns `false`: so both `() => expect(x).toBe(1)` and
 * `() => list.length > 2` work, and a probe may return the object it found.
 *
 * Guarantees: the probe runs at least once, and once more after the deadline if the last try began
 * before it; at most one try runs at a time.
 * Caveats: a try that hangs is not interrupted (the test's own timeout ends it).
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const written = options.timeoutMs ?? 30_000;
  const slower = pace();
  const timeoutMs = Math.round(written * slower);
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const startedAt = Date.now();
    try {
      const result = await probe();
      if (result !== false) return result as Exclude<T, false>;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (startedAt >= deadline) break;
    await sleep(Math.min(options.intervalMs ?? 100, Math.max(0, deadline - Date.now())));
  }
  const what = options.what ?? `\`${String(probe).replace(/\s+/g, " ").slice(0, 200)}\` to pass`;
  const why = last === undefined ? "it still returned false" : `last failure: ${messageOf(last)}`;
  const paced = slower > 1 ? ` (${written} ms at the machine's pace now, ×${slower.toFixed(2)})` : "";
  throw new NeverHappenedError(`waited ${timeoutMs} ms${paced} for ${what}; ${why}`, { cause: last });
}

/**
 * Returns `value` if `wanted(value)` holds, else throws showing the whole value: for probes that read
 * an object and wait for a state of it, e.g. `eventually(async () => satisfying(await read(), isReady))`.
 */
export function satisfying<T>(value: T, wanted: (value: T) => boolean): T {
  if (wanted(value)) return value;
  throw new Error(
    `${wanted.name || String(wanted)} does not hold for:\n${JSON.stringify(value, showCollections, 2) ?? String(value)}`,
  );
}

/** JSON has no Map or Set: show them as an object and an array rather than as `{}`. */
function showCollections(_key: string, value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
