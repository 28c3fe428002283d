/**
 * When a ClusterSnapshotSchedule's snapshots are due, pure: at the schedule's creation and every `every` after it.
 * Anchored at the creation (not at the last snapshot taken), so the times due never drift, a restarted engine
 * computes the same ones, and one that missed several takes only the latest, at once.
 */
import { MIN_SNAPSHOT_INTERVAL_MS } from "../../api/constants/cluster-snapshot-schedule.ts";
import { parseDuration } from "../../api/duration.ts";

/** The times due around `nowMs`, in ms since the epoch: the latest at or before it (none before the first) and the next. */
export interface SlotsAt {
  readonly latestMs?: number;
  readonly nextMs: number;
}

/** What is wrong with `every` and `keep` (each naming its field); empty: they are sound. */
export function scheduleProblems(every: string | undefined, keep: number | undefined): string[] {
  const problems: string[] = [];
  const everyMs = every === undefined ? undefined : parseDuration(every);
  if (everyMs === undefined)
    problems.push(`every: ${JSON.stringify(every ?? "")} is not a Go duration such as 6h, 90m or 1h30m`);
  else if (everyMs < MIN_SNAPSHOT_INTERVAL_MS)
    problems.push(`every: ${every} is shorter than the shortest interval, 1m`);
  if (keep === undefined || !Number.isInteger(keep) || keep < 1)
    problems.push(`keep: ${JSON.stringify(keep ?? null)} must be a whole number of at least 1`);
  return problems;
}

/** The times due around `nowMs` for a schedule made at `anchorMs` that takes snapshots every `everyMs`. */
export function slotsAt(anchorMs: number, everyMs: number, nowMs: number): SlotsAt {
  if (nowMs < anchorMs) return { nextMs: anchorMs };
  const latestMs = anchorMs + Math.floor((nowMs - anchorMs) / everyMs) * everyMs;
  return { latestMs, nextMs: latestMs + everyMs };
}

/** A time due as it goes into a snapshot's name: `20261128230000` (UTC, to the second). */
export function slotStamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/[-:T]/g, "");
}
