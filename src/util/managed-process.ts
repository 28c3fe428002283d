/** A child process in its own process group, with its output in a log file and a clean stop. */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { signalProcessGroup } from "./process-groups.ts";

/** How to start a {@link ManagedProcess}. */
export interface ManagedProcessProps {
  /** Short name used in messages, e.g. `etcd`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** File that receives stdout and stderr. */
  readonly logPath: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** A running child process. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Whether the process has exited. */
  hasExited(): boolean;
  /** The last `lines` lines of the log. */
  tail(lines?: number): string;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a process detached into its own process group, so that stopping it also stops anything it
 * started, and unreferenced, so that it never keeps the caller's event loop alive; callers own its
 * lifetime (see `exit-cleanup.ts` for the crash path).
 */
export function startManagedProcess(props: ManagedProcessProps): ManagedProcess {
  const log = openSync(props.logPath, "a");
  const child = (() => {
    try {
      return spawn(props.command, [...props.args], {
        detached: true,
        stdio: ["ignore", log, log],
        env: props.env ?? process.env,
      });
    } finally {
      closeSync(log); // the child holds its own descriptor
    }
  })();
  let exitedWith: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      exitedWith = code ?? signal ?? "unknown";
      resolve(exitedWith);
    });
    child.once("error", (error) => {
      exitedWith = `failed to start: ${error.message}`;
      resolve(exitedWith);
    });
  });
  child.unref();
  const pid = child.pid ?? -1;

  const signalGroup = (signal: NodeJS.Signals) => {
    if (exitedWith === undefined) signalProcessGroup(pid, signal);
  };

  return {
    name: props.name,
    pid,
    logPath: props.logPath,
    exited,
    hasExited: () => exitedWith !== undefined,
    tail: (lines = 20) => tailOfFile(props.logPath, lines),
    async stop(graceMs = 5_000) {
      signalGroup("SIGTERM");
      const outcome = await Promise.race([exited.then(() => "exited"), sleep(graceMs, "timeout")]);
      if (outcome === "timeout") {
        signalGroup("SIGKILL");
        await exited;
      }
    },
  };
}

/** The last `lines` lines of a text file, or a note that it cannot be read. */
export function tailOfFile(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch (error) {
    return `(no log at ${path}: ${(error as Error).message})`;
  }
}
