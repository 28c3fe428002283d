/**
 * The Node.js the engine needs, checked before any of its modules load. This file imports nothing: it must load on
 * any Node, including ones the engine's own modules fail on (Node 20 stops at `module.registerHooks` with a
 * SyntaxError that names no version).
 */

/** The oldest Node.js the engine runs on; package.json's `engines.node` says the same (`>=` this). */
export const REQUIRED_NODE = "22.19";

/** What to tell a person when `found` (e.g. `20.20.2`) is older than `required` (`MAJOR.MINOR`); undefined when it is not. */
export function nodeVersionProblem(
  what: string,
  found: string,
  executable: string,
  required: string = REQUIRED_NODE,
): string | undefined {
  const [major = 0, minor = 0] = found.split(".").map(Number);
  const [needMajor = 0, needMinor = 0] = required.split(".").map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `${what} needs Node.js ${required} or later, but this is Node.js ${found} (${executable}); run it with a newer node.`;
}
