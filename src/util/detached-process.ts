/**
 * The one way this code starts a process that outlives its caller: detached into its own process group (so a
 * stop reaches what it starts), unreferenced (it never keeps the caller's event loop alive), its output in files.
 * Watching it from this process is {@link startManagedProcess}'s; stopping it by pid is `process-groups.ts`'s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";

/** How to start a detached process. */
export interface DetachedProps {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** The file stdout goes to; absent: nowhere. */
  readonly stdout?: string;
  /** The file stderr goes to; absent: stdout's. */
  readonly stderr?: string;
  /** Start the output files empty; by default the output is appended (a log across restarts). */
  readonly truncate?: boolean;
  /**
   * Run it under a small `sh` wrapper that writes its exit status to `exitFile` (atomically), for a later
   * process to read: the exit event is seen only by the process that started it. `marker` names the
   * wrapper in the process list; the exit file's path in its command line tells it from a reused pid.
   */
  readonly exitStatus?: { readonly exitFile: string; readonly marker: string };
}

/**
 * Starts `command args` detached. A failure to start comes as the child's `error` event (and no exit status
 * in the exit file); it is never thrown here. The caller closes nothing: the child holds its own descriptors.
 */
export function startDetached(props: DetachedProps): ChildProcess {
  const flags = props.truncate ? "w" : "a";
  const stdout = props.stdout === undefined ? "ignore" : openSync(props.stdout, flags);
  const stderr =
    props.stderr === undefined || props.stderr === props.stdout ? stdout : openSync(props.stderr, flags);
  const [command, args] = props.exitStatus
    ? [
        "/bin/sh",
        [
          "-c",
          EXIT_STATUS_WRAPPER,
          props.exitStatus.marker,
          props.exitStatus.exitFile,
          props.command,
          ...props.args,
        ],
      ]
    : [props.command, [...props.args]];
  try {
    const child = spawn(command, args, {
      detached: true,
      stdio: ["ignore", stdout, stderr],
      env: props.env ?? process.env,
    });
    child.on("error", () => {}); // callers that care listen too; the rest read the missing exit status
    child.unref();
    return child;
  } finally {
    for (const fd of new Set([stdout, stderr])) if (typeof fd === "number") closeSync(fd);
  }
}

/** `sh -c` script: runs `"$@"` and writes its exit status to `$1` atomically. */
const EXIT_STATUS_WRAPPER = [
  'exit_file="$1"',
  "shift",
  '"$@"',
  "code=$?",
  'printf "%s\\n" "$code" > "$exit_file.tmp" && mv -f "$exit_file.tmp" "$exit_file"',
  'exit "$code"',
].join("\n");
