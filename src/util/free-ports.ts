/** Finds free TCP ports on loopback for the processes of a control plane. */
import { createServer, type Server } from "node:net";

/**
 * Returns `count` distinct ports that were free on `host` a moment ago: `preferred[i]` where that one is
 * free (so a restarted control plane keeps its address), else one the OS picks.
 *
 * Caveats: another process may take a port between this call and its use; callers retry the
 * whole start on "address already in use".
 */
export async function freePorts(
  count: number,
  host = "127.0.0.1",
  preferred: readonly (number | undefined)[] = [],
): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const wanted = preferred[i];
      servers.push(
        (wanted === undefined ? undefined : await listen(host, wanted).catch(() => undefined)) ??
          (await listen(host, 0)),
      );
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

function listen(host: string, port: number): Promise<Server> {
  const server = createServer();
  return new Promise<Server>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
