/** Where the tests keep what they build once per machine (kube binaries, images' inputs, tools, run durations). */
import { homedir } from "node:os";
import { join } from "node:path";

/** `~/.cache/openmcp-engine/<parts>` (or under `$XDG_CACHE_HOME`), as the hack/ scripts keep theirs. */
export function machineCache(...parts: string[]): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "openmcp-engine", ...parts);
}
