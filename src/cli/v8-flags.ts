/**
 * The engine's V8 heap limits, however it is started. V8 fixes its heap sizes when the process starts
 * (`v8.setFlagsFromString` afterwards changes neither the old-space limit nor the semi-space: measured),
 * so `run` and `up` replace their own process, same pid, with one that has the flags — unless
 * NODE_OPTIONS or the node command line already sets them: a user's own setting always wins.
 * Started from the TypeScript sources, the replaced process also keeps Node's compile cache: Node strips
 * types with a WebAssembly compiler whose memory never shrinks (about 17 MB RSS for the engine's modules,
 * measured); with the cache warm, no module is stripped again and that compiler is never loaded.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The flags, from the scale benchmark: 10,000 Ready Clusters retain about 60 MB of heap. Small semi-spaces
 * keep the young generation from growing to V8's default (up to 64 MB per semi-space on a large machine),
 * which is most of the difference in RSS; the old-space limit keeps the heap from growing far beyond what
 * it retains. Raise the old space beyond about 50,000 objects per replica.
 */
export const ENGINE_V8_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--max-old-space-size=256"];

/** A flag's name as V8 reads it: `_` and `-` are the same. */
const flagName = (flag: string) => flag.replace(/=.*$/, "").replaceAll("_", "-");

/** The engine's flags that neither the command line (`execArgv`) nor NODE_OPTIONS sets already. */
export function missingV8Flags(execArgv: readonly string[], nodeOptions = ""): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter(Boolean).map(flagName));
  return ENGINE_V8_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** Whether a debugger is asked for: a replaced process would drop its session, so it is left alone. */
function debugging(execArgv: readonly string[], nodeOptions = ""): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => flag.startsWith("--inspect"));
}

/** Whether `script` is TypeScript, which Node strips before it runs it. */
const isTypeScript = (script: string) => /\.[mc]?ts$/.test(script);

/** Where a start from the sources keeps Node's compile cache unless NODE_COMPILE_CACHE names a folder. */
export const COMPILE_CACHE_DIRECTORY = join(tmpdir(), "openmcp-engine-compile-cache");

/**
 * The environment of the replaced process: this one's, plus NODE_COMPILE_CACHE where `script` is TypeScript
 * and neither NODE_COMPILE_CACHE nor NODE_DISABLE_COMPILE_CACHE is set (so compiled JavaScript, as the
 * image and `npx` run, is left as it is).
 */
export function engineEnvironment(script: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!isTypeScript(script) || env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return env;
  return { ...env, NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY };
}

/**
 * Replaces this process (same pid, stdio and environment) with `node <missing flags> <the same script and
 * arguments>` when any of {@link ENGINE_V8_FLAGS} is missing; returns only if nothing was missing, or
 * where a process cannot replace itself (Windows, a debugger attached). Call it before any output.
 */
export function execWithEngineV8Flags(): void {
  const missing = missingV8Flags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length === 0 || debugging(process.execArgv, process.env.NODE_OPTIONS)) return;
  if (typeof process.execve !== "function" || process.platform === "win32") return;
  const [, script, ...args] = process.argv;
  if (script === undefined) return;
  process.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...missing, script, ...args],
    engineEnvironment(script, process.env),
  );
}
