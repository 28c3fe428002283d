/** A loop run in a child node process and killed with kill -9: for proving that a write survives a kill at any moment. */
import { spawn } from "node:child_process";
import { once } from "node:events";

/**
 * Runs `loop` (ES module source that prints a line once it has begun) in a new node process and kills it with
 * SIGKILL `delayMs` after that line; resolves to its pid once it has exited. It is killed even when waiting fails.
 */
export async function killLoopAfter(loop: string, delayMs: number): Promise<number | undefined> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", loop], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await once(child.stdout, "data");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  }
  return child.pid;
}
