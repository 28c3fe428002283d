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

function command(child: ChildProcess, what: "block" | "unblock"): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null)
      return reject(new Error(`the TCP proxy process has exited (${child.exitCode})`));
    child.once("message", () => resolve());
    child.send(what);
  });
}
