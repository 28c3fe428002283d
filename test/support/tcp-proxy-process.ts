/**
 * The TCP proxy of tcp-proxy.ts in a process of its own. The proxy of the sharding test carries one replica's Lease
 * renewals; in the test's own process it shared an event loop with the creation of 3,000 Clusters, and on a loaded
 * machine the bytes it held back cost that replica its membership (it exits on a missed renew deadline, by design).
 * Here only the proxy runs in the process; the test steers it over the IPC channel.
 */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { TcpProxyTarget } from "./tcp-proxy.ts";

/** A proxy in its own process; block and unblock resolve once the proxy has done it. */
export interface TcpProxyProcess {
  readonly port: number;
  block(): Promise<void>;
  unblock(): Promise<void>;
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dirname, "tcp-proxy-main.ts");

/** Starts the proxy process for `target` and waits for its port. */
export async function startTcpProxyProcess(target: TcpProxyTarget): Promise<TcpProxyProcess> {
  const child = fork(MAIN, [target.host, String(target.port)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { port: number }).port));
    child.once("exit", (code) =>
      reject(new Error(`the TCP proxy process exited with ${code} before it listened`)),
    );
  });
  return {
    port,
    block: () => command(child, "block"),
    unblock: () => command(child, "unblock"),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("stop");
      await exited;
    },
  };
}

/** How long the proxy process may take to confirm a command (it does it at once when it runs at all). */
const COMMAND_TIMEOUT_MS = 30_000;

function command(child: ChildProcess, what: "block" | "unblock"): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null)
      return reject(new Error(`the TCP proxy process has exited (${child.exitCode})`));
    const timer = setTimeout(() => {
      child.off("message", done);
      reject(new Error(`the TCP proxy process did not confirm "${what}" within ${COMMAND_TIMEOUT_MS} ms`));
    }, COMMAND_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    child.once("message", done);
    child.send(what);
  });
}
