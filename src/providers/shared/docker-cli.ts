/**
 * The Docker CLI as backends call it: one command, its stdout, or a rejection with Docker's own last words. Used by
 * the kind backend (its nodes, volumes and images) and the capi backend (Cluster API's Docker machines asleep).
 */
import { execFile } from "node:child_process";

/** Runs the Docker CLI: stdout, or a rejection with Docker's last words (never its stdin) or how it failed. */
export type DockerRun = (args: readonly string[], input?: string) => Promise<string>;

/** {@link DockerRun} with the Docker CLI `docker`. */
export function dockerRunner(docker: string, timeoutMs = 60_000): DockerRun {
  return (args, input) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        docker,
        [...args],
        { encoding: "utf8", timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          reject(new Error(stderr.trim().split("\n").slice(-2).join(" | ") || error.message));
        },
      );
      // A command that exits before reading (or fails to start) closes the pipe: its exit status says why.
      child.stdin?.on("error", () => {});
      child.stdin?.end(input ?? "");
    });
}
