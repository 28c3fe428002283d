/** Test helpers about OS processes and folders: is it still there, wait until it is gone. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import { isProcessAlive } from "../../src/controlplane/process-groups.ts";
import { eventually } from "./eventually.ts";

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as gone). */
export const isAlive = (pid: number): boolean => isProcessAlive(pid);

/** Waits until none of `pids` is alive and `directory` is gone; fails saying what is left. */
export async function waitUntilGone(
  pids: readonly number[],
  directory: string,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    () =>
      expect({ alive: pids.filter(isAlive), directoryExists: existsSync(directory) }).toEqual(NOTHING_LEFT),
    { what: `processes ${pids.join(", ")} and ${directory} to be gone`, timeoutMs },
  );
}

const NOTHING_LEFT = { alive: [], directoryExists: false };

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
