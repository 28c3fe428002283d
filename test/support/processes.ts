/** Test helpers about OS processes and folders: is it still there, wait until it is gone. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { isProcessAlive } from "../../src/controlplane/process-groups.ts";

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as gone). */
export const isAlive = (pid: number): boolean => isProcessAlive(pid);

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

/** Pids of the live processes whose command line contains `text` (e.g. a state folder), from `/proc`. */
export function processesMentioning(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text) && isAlive(pid);
      } catch {
        return false; // gone meanwhile
      }
    });
}
