/**
 * The engine's memory settings, however it is started. V8 fixes its heap sizes when the process starts
 * (`v8.setFlagsFromString` afterwards changes neither the old-space limit nor the semi-space: measured),
 * so `run` and `up` — and a program embedding the engine that asks for it — replace their own process,
 * same pid, with one that has the flags, unless NODE_OPTIONS or the node command line already sets them:
 * a user's own setting always wins. The replaced process also preloads the lean client-node hooks (see
 * lean-client-node.ts), so they apply before anything loads the Kubernetes client, and, where the engine
 * runs from its TypeScript sources, keeps Node's compile cache: Node strips types with a WebAssembly
 * compiler whose memory never shrinks (about 17 MB RSS for the engine's modules, measured); with the
 * cache warm, no module is stripped again and that compiler is never loaded.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { useLeanClientNode } from "./lean-client-node.ts";

/**
 * The flags, from the scale benchmark: 10,000 Ready Clusters retain about 60 MB of heap. Small semi-spaces
 * keep the young generation from growing to V8's default (up to 64 MB per semi-space on a large machine),
 * which is most of the difference in RSS; the old-space limit keeps the heap from growing far beyond what
 * it retains. Raise the old space beyond about 50,000 objects per replica. `--optimize-for-size` makes V8
 * grow the heap less eagerly between full collections and give pages back sooner: granting 1,000
 * ClusterRequests peaked at 128–131 MB instead of 155–162 MB, for about 7 % more CPU (cluster-requests
 * bench). It is the one of the three that still takes effect after the process has started, and one
 * that NODE_OPTIONS may not carry (node refuses to start): the image sets the other two there, and `run`
 * adds it on the command line of its replaced process.
 */
export const ENGINE_V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=2",
  "--max-old-space-size=256",
  "--optimize-for-size",
];
const OPTIMIZE_FOR_SIZE = "--optimize-for-size";

/** A flag's name as V8 reads it: `_` and `-` are the same, and `--no-x` sets `--x` (to false). */
const flagName = (flag: string) =>
  flag
    .replace(/=.*$/, "")
    .replaceAll("_", "-")
    .replace(/^--no-/, "--");

/** The engine's flags that neither the command line (`execArgv`) nor NODE_OPTIONS sets already. */
export function missingV8Flags(execArgv: readonly string[], nodeOptions = ""): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter(Boolean).map(flagName));
  return ENGINE_V8_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** Whether a debugger is asked for: a replaced process would drop its session, so it is left alone. */
function debugging(execArgv: readonly string[], nodeOptions = ""): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => flag.startsWith("--inspect"));
}

/** Whether the engine runs from its TypeScript sources (Node strips each module's types) or compiled. */
const FROM_TYPESCRIPT = import.meta.url.endsWith(".ts");

/** The module that installs the lean client-node hooks when preloaded (`--import`), beside this one. */
const LEAN_CLIENT_NODE_PRELOAD = new URL(
  `./lean-client-node-preload.${FROM_TYPESCRIPT ? "ts" : "js"}`,
  import.meta.url,
).href;

/** Where a start from the sources keeps Node's compile cache unless NODE_COMPILE_CACHE names a folder. */
export const COMPILE_CACHE_DIRECTORY = join(tmpdir(), "openmcp-engine-compile-cache");

/**
 * The environment of the replaced process: this one's, plus NODE_COMPILE_CACHE where the engine runs from
 * TypeScript and neither NODE_COMPILE_CACHE nor NODE_DISABLE_COMPILE_CACHE is set (so compiled JavaScript,
 * as the image and `npx` run, is left as it is).
 */
export function engineEnvironment(
  env: NodeJS.ProcessEnv,
  fromTypeScript = FROM_TYPESCRIPT,
): NodeJS.ProcessEnv {
  if (!fromTypeScript || env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return env;
  return { ...env, NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY };
}

/** Whether this process can be started again as it was: a script (not `node -e`), no debugger, POSIX. */
function replaceable(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  if (debugging(execArgv, nodeOptions)) return false; // a replaced process would drop the debugger's session
  if (execArgv.some((flag) => /^(-e|--eval|-p|--print)(=|$)/.test(flag))) return false;
  return (
    typeof process.execve === "function" && process.platform !== "win32" && process.argv[1] !== undefined
  );
}

/**
 * Replaces this process (same pid, stdio and environment) with `node <missing flags> --import <lean
 * client-node hooks> <the same script and arguments>` when any of {@link ENGINE_V8_FLAGS} is missing.
 * Returns if nothing was missing, or where a process cannot replace itself (Windows, a debugger attached,
 * `node -e`): there it sets what V8 still honours after start (`--optimize-for-size`) and installs the
 * lean client-node hooks for the modules not loaded yet. Call it first, before any output or side effect:
 * the script runs again from its start. A program embedding the engine calls it as the first statement
 * of its entry script.
 */
export function execWithEngineMemorySettings(): void {
  const missing = missingV8Flags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length === 0) return;
  if (replaceable(process.execArgv, process.env.NODE_OPTIONS)) {
    const [, script, ...args] = process.argv as [string, string, ...string[]];
    process.execve?.(
      process.execPath,
      [
        process.execPath,
        ...process.execArgv,
        ...missing,
        `--import=${LEAN_CLIENT_NODE_PRELOAD}`,
        script,
        ...args,
      ],
      engineEnvironment(process.env),
    );
  }
  setLateV8Flags();
  useLeanClientNode();
}

/** The flags {@link setLateV8Flags} has set in this process. */
const setLate = new Set<string>();

/**
 * Sets, in this process, the engine's flags V8 still honours after start (`--optimize-for-size`) where
 * neither the command line nor NODE_OPTIONS sets them; returns those it set. For a process whose flags were
 * fixed without the engine's: an embedding program (measured: 1,000 ClusterRequests in a plain host peaked
 * at 360 MB, with this at 155 MB).
 */
export function setLateV8Flags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS,
): string[] {
  const late = missingV8Flags(execArgv, nodeOptions).filter(
    (flag) => flag === OPTIMIZE_FOR_SIZE && !setLate.has(flag),
  );
  for (const flag of late) {
    setFlagsFromString(flag);
    setLate.add(flag);
  }
  return late;
}

/** The engine's flags this process still runs without: neither given at its start nor set late. */
export function v8FlagsStillMissing(execArgv: readonly string[], nodeOptions?: string): string[] {
  return missingV8Flags(execArgv, nodeOptions).filter((flag) => !setLate.has(flag));
}
