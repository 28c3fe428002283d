/** Binding a view's HTTP server: listen where asked, and the address a browser on this machine opens. */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Listens on `host`:`port` (port 0 picks a free one). Resolves with the port bound and the `host:port` to
 * show in URLs: a wildcard host is shown as loopback, an IPv6 host in brackets.
 */
export async function listenOn(
  server: Server,
  host: string,
  port: number,
): Promise<{ readonly port: number; readonly address: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const bracketed = host.includes(":") ? `[${host}]` : host;
  const shown = bracketed === "0.0.0.0" || bracketed === "[::]" ? "127.0.0.1" : bracketed;
  return { port: bound, address: `${shown}:${bound}` };
}
