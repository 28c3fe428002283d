/** OS processes known only by pid (no child handle): is one alive and ours, and stopping their process groups. */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Whether `pid` is a live process; a zombie awaiting its reaper counts as gone. With `marker`, the
 * process must also carry that text in its command line, so that a pid reused by an unrelated
 * process after a reboot or a long time is not mistaken for ours.
 *
 * Caveats: reads `/proc` (Linux); where there is none, only signal 0 is asked and `marker` is not checked.
 */
export function isProcessAlive(pid: number, marker?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && hasProcFs()) return false;
    return answersSignalZero(pid);
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  if (state === "Z" || state === "X") return false;
  if (marker === undefined) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
  } catch {
    return false; // it went away meanwhile
  }
}

let procFs: boolean | undefined;
function hasProcFs(): boolean {
  if (procFs === undefined) {
    try {
      readFileSync("/proc/self/stat");
      procFs = true;
    } catch {
      procFs = false;
    }
  }
  return procFs;
}

function answersSignalZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Sends `signal` to the process group led by `pid`; a group that is gone already is fine. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** A process to stop: the leader of its own process group, and the marker that proves it is ours. */
export interface GroupLeader {
  readonly pid: number;
  readonly marker?: string;
}

/**
 * Stops process groups one after the other, in the order given: SIGTERM to the group, SIGKILL after
 * `graceMs` if its leader is still alive; resolves once every leader is gone. Leaders that are not alive
 * (or not ours, see {@link isProcessAlive}) are skipped.
 */
export async function stopProcessGroups(leaders: readonly GroupLeader[], graceMs = 5_000): Promise<void> {
  for (const { pid, marker } of leaders) {
    if (!isProcessAlive(pid, marker)) continue;
    signalProcessGroup(pid, "SIGTERM");
    if (await waitUntilDead(pid, graceMs)) continue;
    signalProcessGroup(pid, "SIGKILL");
    await waitUntilDead(pid, 10_000);
  }
}

async function waitUntilDead(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}
