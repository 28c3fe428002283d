/**
 * Where the binaries the engine and its tests run come from: the repository's build scripts under `hack/`
 * (each builds once per machine, caches, and prints the folder as its last line), and whether a file can run.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { basename, delimiter, join } from "node:path";

/** The path of a script under the repository's `hack/` folder, e.g. `hackScript("capi", "build.sh")`. */
export function hackScript(...path: readonly string[]): string {
  return join(import.meta.dirname, "..", "..", "hack", ...path);
}

/**
 * Runs a build script (building on first use takes minutes; its progress goes to stderr) and returns the
 * folder it printed last (`args` choose what it builds, e.g. `build.sh etcdutl`). Throws, with the script's error, when it fails or prints no folder.
 */
export function runBuildScript(script: string, args: readonly string[] = []): string {
  let output: string;
  try {
    output = execFileSync(script, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  } catch (error) {
    throw new Error(`${script} failed (see its output above): ${(error as Error).message}`, { cause: error });
  }
  const folder = output.trim().split("\n").at(-1);
  if (!folder) throw new Error(`${script} printed no folder`);
  return folder;
}

/** A build script's folder, named after the version built in it (e.g. `…/capi/v1.11.1`). */
export interface VersionFolder {
  readonly directory: string;
  readonly version: string;
}

/** {@link runBuildScript} for a script whose folder is named after the version it built. */
export function runVersionedBuildScript(script: string): VersionFolder {
  const directory = runBuildScript(script);
  return { directory, version: basename(directory) };
}

/** Runs a versioned build script (see {@link runVersionedBuildScript}) and finds `name` in its folder, ready to run. */
export function findBuiltBinary(script: string, name: string): VersionFolder & { readonly binary: string } {
  const built = runVersionedBuildScript(script);
  const binary = join(built.directory, name);
  requireExecutable(binary, `run ${script}`);
  return { ...built, binary };
}

/** Whether `file` is a file this process may run. */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Throws `<file> is missing or not executable; <remedy>` unless {@link isExecutable}. */
export function requireExecutable(file: string, remedy: string): void {
  if (!isExecutable(file)) throw new Error(`${file} is missing or not executable; ${remedy}`);
}

/** The first executable file named `command` in the folders of `path` (`$PATH`), or undefined when none is. */
export function onPath(command: string, path = process.env.PATH ?? ""): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (folder === "") continue;
    const file = join(folder, command);
    if (isExecutable(file)) return file;
  }
  return undefined;
}
