/** A child process in its own process group, with its output in a log file and a clean stop. */
import { readFileSync } from "node:fs";
import { startDetached } from "./detached-process.ts";
import { stopProcessGroup } from "./process-groups.ts";

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
 * Starts a process detached (see {@link startDetached}) and watches it from here: its exit, its log, its stop.
 * Callers own its lifetime (see `exit-cleanup.ts` for the crash path).
 */
export function startManagedProcess(props: ManagedProcessProps): ManagedProcess {
  const child = startDetached({
    command: props.command,
    args: props.args,
    stdout: props.logPath,
    ...(props.env ? { env: props.env } : {}),
  });
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
  const pid = child.pid ?? -1;
  return {
    name: props.name,
    pid,
    logPath: props.logPath,
    exited,
    hasExited: () => exitedWith !== undefined,
    tail: (lines = 20) => tailOfFile(props.logPath, lines),
    async stop(graceMs = 5_000) {
      // Once it has exited, its pid may be another process's.
      if (exitedWith === undefined) await stopProcessGroup({ pid }, graceMs);
      // The child is unreferenced (it may outlive us); while we wait for its exit event it must keep this process
      // alive, or a script with nothing else to do ends before the event comes.
      child.ref();
      await exited;
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
