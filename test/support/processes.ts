/** Test helpers about OS processes and folders: is it still there, wait until it is gone. */
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Polls until none of `pids` is alive and `directory` is gone; returns what is still left at the deadline. */
export async function waitUntilGone(
  pids: readonly number[],
  directory: string,
  deadlineMs = 30_000,
): Promise<{ alive: number[]; directoryExists: boolean }> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const left = { alive: pids.filter(isAlive), directoryExists: existsSync(directory) };
    if ((left.alive.length === 0 && !left.directoryExists) || Date.now() > deadline) return left;
    await sleep(100);
  }
}
