/** Polling a condition a person waits for, with what it waits for in the error when time runs out. */
import { setTimeout as sleep } from "node:timers/promises";

/** The last thing a poll saw: a value when done, or why not yet. */
export type PollResult<T> =
  | { readonly done: true; readonly value: T }
  | { readonly done: false; readonly why: string };

/**
 * Calls `look` every `intervalMs` until it says done, and resolves with its value. Errors `look` throws count as
 * "not yet" (an API server restarting); after `timeoutMs` it rejects naming `what` and the last reason.
 */
export async function pollUntil<T>(
  what: string,
  look: () => Promise<PollResult<T>>,
  props: { readonly timeoutMs: number; readonly intervalMs?: number; readonly onWhy?: (why: string) => void },
): Promise<T> {
  const deadline = Date.now() + props.timeoutMs;
  let last = "";
  for (;;) {
    let result: PollResult<T>;
    try {
      result = await look();
    } catch (error) {
      result = { done: false, why: (error as Error).message };
    }
    if (result.done) return result.value;
    if (result.why !== last) props.onWhy?.(result.why);
    last = result.why;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${Math.round(props.timeoutMs / 1_000)} s; last: ${last}`);
    await sleep(props.intervalMs ?? 1_000);
  }
}
