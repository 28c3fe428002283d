/** Stops control planes when the process ends in any way: normal exit, crash, signal, or SIGKILL (watchdog). */
import { rmSync } from "node:fs";
import { startDetached } from "./detached-process.ts";

/** What must go when the owning process goes: process groups to kill and a folder to remove. */
export interface Leftovers {
  readonly processGroups: readonly number[];
  readonly directory: string;
}

const registered = new Map<symbol, Leftovers>();
let hooksInstalled = false;

/**
 * Registers leftovers to clean up if the process exits before {@link release} is called, and starts
 * a watchdog process that cleans them up if this process is killed outright (SIGKILL, OOM), where no
 * exit hook runs. Returns a release function that disarms both.
 *
 * Guarantees: after this process exits, the process groups receive SIGKILL and the folder is removed,
 * within about a second even after SIGKILL. Caveats: SIGINT/SIGTERM/SIGHUP handlers are installed while
 * anything is registered; unless the program has handlers of its own for that signal, they clean up and
 * exit with the conventional 128+signal code.
 */
export function guardLeftovers(leftovers: Leftovers): () => void {
  const key = Symbol(leftovers.directory);
  registered.set(key, leftovers);
  installHooks();
  const watchdog = startWatchdog(leftovers);
  return () => {
    registered.delete(key);
    try {
      if (watchdog.pid) process.kill(watchdog.pid, "SIGKILL");
    } catch {
      // already gone
    }
    if (registered.size === 0) uninstallHooks();
  };
}

function cleanUpSync(): void {
  for (const leftovers of registered.values()) {
    for (const group of leftovers.processGroups) {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(leftovers.directory, { recursive: true, force: true });
  }
  registered.clear();
}

const onSignal = (signal: NodeJS.Signals) => {
  // Someone else handles this signal (e.g. a CLI that stops gracefully and then releases): let them.
  if (process.listenerCount(signal) > 1) return;
  cleanUpSync();
  process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : 15));
};

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", cleanUpSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
}

function uninstallHooks(): void {
  if (!hooksInstalled) return;
  hooksInstalled = false;
  process.off("exit", cleanUpSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(signal, onSignal);
}

// Runs in a separate Node process: polls the owner and cleans up once it is gone.
const watchdogSource = `
const { rmSync } = require("node:fs");
const [owner, directory, ...groups] = process.argv.slice(1);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
setInterval(() => {
  if (alive(Number(owner))) return;
  for (const group of groups) { try { process.kill(-Number(group), "SIGKILL"); } catch {} }
  setTimeout(() => { rmSync(directory, { recursive: true, force: true }); process.exit(0); }, 200);
}, 250);
`;

function startWatchdog(leftovers: Leftovers) {
  return startDetached({
    command: process.execPath,
    args: [
      "-e",
      watchdogSource,
      String(process.pid),
      leftovers.directory,
      ...leftovers.processGroups.map(String),
    ],
  });
}
