/** OS processes known only by pid (no child handle): is one alive and ours, and stopping their process groups. */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Whether `pid` is a live process; a zombie awaiting its reaper counts as gone. A process we may not
 * signal (EPERM) exists, as someone else's: it is alive. With `marker`, it must also be ours: carry that
 * text in its command line, so that a pid reused by an unrelated process after a reboot or a long time
 * is not mistaken for ours.
 *
 * Caveats: the command line is read from `/proc` (Linux). Where it cannot be read, a process we may not
 * signal is not ours (we may always signal our own), which is all that is left to check the marker by.
 */
export function isProcessAlive(pid: number, marker?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const signalled = signalZero(pid);
  if (signalled === "gone") return false;
  const stat = readProc(pid, "stat");
  if (stat === "gone") return false;
  if (stat !== undefined) {
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return false;
  }
  if (marker === undefined) return true;
  const commandLine = readProc(pid, "cmdline");
  if (commandLine === "gone") return false; // it went away meanwhile
  return commandLine === undefined ? signalled === "ours" : commandLine.includes(marker);
}

/** What signal 0 says: a process we may signal, one we may not (EPERM: it exists), or none. */
function signalZero(pid: number): "ours" | "foreign" | "gone" {
  try {
    process.kill(pid, 0);
    return "ours";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? "foreign" : "gone";
  }
}

/** A `/proc/<pid>` file's text; "gone" when /proc exists but the process does not; undefined when unreadable. */
function readProc(pid: number, file: "stat" | "cmdline"): string | "gone" | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" && hasProcFs() ? "gone" : undefined;
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

/** Sends `signal` to the process group led by `pid`; a group that is gone already is fine. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The live processes whose command line carries `marker` (Linux: read from `/proc`; none where it is missing). */
export function processesMarked(marker: string): number[] {
  if (!hasProcFs()) return [];
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const commandLine = readProc(pid, "cmdline");
      return (
        typeof commandLine === "string" &&
        commandLine !== "gone" &&
        commandLine.includes(marker) &&
        isProcessAlive(pid)
      );
    });
}

/** A process to stop: the leader of its own process group, and the marker that proves it is ours. */
export interface GroupLeader {
  readonly pid: number;
  readonly marker?: string;
}

/**
 * Stops process groups one after the other, in the order given (see {@link stopProcessGroup}); resolves
 * once every leader is gone.
 */
export async function stopProcessGroups(leaders: readonly GroupLeader[], graceMs = 5_000): Promise<void> {
  for (const leader of leaders) await stopProcessGroup(leader, graceMs);
}

/**
 * Stops a process group: SIGTERM to the group, SIGKILL after `graceMs` if its leader is still alive, and
 * SIGKILL to what is left of the group either way (a child that outlived its leader: a command a wrapper ran).
 * Resolves once the leader is gone. A leader that is not alive (or not ours, see {@link isProcessAlive}) is
 * left alone.
 */
export async function stopProcessGroup({ pid, marker }: GroupLeader, graceMs = 5_000): Promise<void> {
  if (!isProcessAlive(pid, marker)) return;
  signalProcessGroup(pid, "SIGTERM");
  const stopped = await waitUntilDead(pid, graceMs);
  signalProcessGroup(pid, "SIGKILL");
  if (!stopped) await waitUntilDead(pid, 10_000);
}

async function waitUntilDead(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}
