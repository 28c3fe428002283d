/** Finds free TCP ports on loopback for the processes of a control plane. */
import { createServer, type Server } from "node:net";

/**
 * Returns `count` distinct ports that were free on `host` a moment ago.
 *
 * Caveats: another process may take a port between this call and its use; callers retry the
 * whole start on "address already in use".
 */
export async function freePorts(count: number, host = "127.0.0.1"): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, host, resolve);
      });
    }
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error("listening socket has no port");
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
