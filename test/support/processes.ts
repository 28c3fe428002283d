/** Test helpers about OS processes and folders: is it still there, wait until it is gone. */
import { type ChildProcess, type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { isProcessAlive, processesMarked } from "../../src/util/process-groups.ts";
import { eventually } from "./eventually.ts";

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as gone). */
export const isAlive = (pid: number): boolean => isProcessAlive(pid);

/**
 * The TCP ports process `pid` listens on (Linux: its socket inodes under /proc/<pid>/fd matched with the listening
 * sockets of /proc/net/tcp and tcp6). Lets a test start a server on port 0 and find it, rather than pick a free port
 * that another file's process may take before the server binds it.
 */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket?.[1]) inodes.add(socket[1]);
    } catch {
      // closed since the listing
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      const LISTEN = "0A";
      if (state === LISTEN && inode && inodes.has(inode))
        ports.add(Number.parseInt(local?.split(":")[1] ?? "", 16));
    }
  }
  return [...ports];
}

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

/** Kills `pids` with SIGKILL (as a crash or an OOM kill would) and waits until they are gone. */
export async function killHard(pids: readonly number[]): Promise<void> {
  for (const pid of pids) process.kill(pid, "SIGKILL");
  await eventually(() => expect(pids.filter(isAlive)).toEqual([]), {
    what: `killed processes ${pids.join(", ")} to be gone`,
    timeoutMs: 10_000,
    intervalMs: 20,
  });
}

/** Pids of the live processes whose command line contains `text` (e.g. a state folder), from `/proc`. */
export const processesMentioning: (text: string) => number[] = processesMarked;

/** The engine's command, as an operator starts it: `node src/cli/main.ts …`. */
export const ENGINE_MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");

/** Runs `openmcp-engine <args>` to its end and returns its exit status and what it printed. */
export const runEngineCli = (...args: readonly string[]): SpawnSyncReturns<string> =>
  // A bound: a command that hangs (seen once: a replaced process stuck at start) fails its test, not the run.
  spawnSync(process.execPath, [ENGINE_MAIN, ...args], { encoding: "utf8", timeout: 120_000 });

/** Checks that a finished command exited with `status` and said `message` on stderr. */
export function expectRefused(result: SpawnSyncReturns<string>, status: number, message: string): void {
  expect(result.status).toBe(status);
  expect(result.stderr).toContain(message);
}

/** Where and as whom a test's `openmcp-engine run` works. */
export interface EngineRunProps {
  /** `--provider-name`. */
  readonly provider: string;
  /** `--kubeconfig`: the test's API server. */
  readonly kubeconfig: string;
  /** `--state-dir`: a temporary folder of the test, never the repository's `.state/`. */
  readonly stateDir: string;
  /** `--environment`; absent leaves the engine's default. */
  readonly environment?: string;
  /** Host and port of metrics and health probes (default `0`: a port the system picks, so runs never collide). */
  readonly bind?: string;
}

/** The arguments of `openmcp-engine run` as a test starts it: `props`, then `more` (backend, timing, …). */
export function engineRunArgs(props: EngineRunProps, ...more: readonly string[]): string[] {
  const bind = props.bind ?? "0";
  return [
    "run",
    `--provider-name=${props.provider}`,
    ...(props.environment ? [`--environment=${props.environment}`] : []),
    `--kubeconfig=${props.kubeconfig}`,
    `--state-dir=${props.stateDir}`,
    `--metrics-bind-address=${bind}`,
    `--health-probe-bind-address=${bind}`,
    ...more,
  ];
}

/**
 * Starts `openmcp-engine <args>` as a child process (with `env` added to the test's environment, e.g. a
 * POD_NAME); everything it prints (stdout and stderr) is collected.
 */
export function startEngineCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [ENGINE_MAIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return { child, output: () => output };
}

/**
 * Runs `openmcp-engine <args>` as a user runs a long command: its output shown as it comes and returned once it
 * exits 0 (else rejected with its last output). With `killAfter`, it is killed (kill -9, as a crash) once its output
 * shows that text, and what it printed until then is returned.
 */
export function streamEngineCli(
  args: readonly string[],
  props: { readonly killAfter?: string; readonly timeoutMs?: number } = {},
): Promise<string> {
  const child = spawn(process.execPath, [ENGINE_MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let killed = false;
  const show = (chunk: Buffer) => {
    out += chunk.toString("utf8");
    process.stdout.write(chunk);
    if (props.killAfter !== undefined && !killed && out.includes(props.killAfter)) {
      killed = true;
      child.kill("SIGKILL");
    }
  };
  child.stdout.on("data", show);
  child.stderr.on("data", show);
  const timer = setTimeout(() => child.kill("SIGTERM"), props.timeoutMs ?? 1_500_000);
  return new Promise((resolvePromise, reject) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0 || killed) resolvePromise(out);
      else reject(new Error(`openmcp-engine ${args.join(" ")} exited with ${code}:\n${out.slice(-4_000)}`));
    }),
  );
}
