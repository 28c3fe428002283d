#!/usr/bin/env node
/**
 * Entry point of the `openmcp-engine` command (the package's bin, the image's entry point): checks the Node version
 * first, then loads the command. ES module imports are evaluated before a module's own code, so the command comes
 * in by a dynamic import, after the check; the one static import has no imports of its own.
 */
import { nodeVersionProblem } from "./node-version.ts";

const problem = nodeVersionProblem("openmcp-engine", process.versions.node, process.execPath);
if (problem) {
  console.error(problem);
  process.exit(1);
}
await import("./dispatch.ts");
