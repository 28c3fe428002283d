/**
 * A plain TCP proxy in front of one host:port, so a test can cut ONE process off the API server (a network
 * partition of that process alone) and heal it, while every other process keeps its direct connection.
 * It only pipes bytes: TLS goes end to end, so the client checks the API server's certificate as usual.
 */
import { connect, createServer, type Socket } from "node:net";

/** Where the proxy forwards to. */
export interface TcpProxyTarget {
  readonly host: string;
  readonly port: number;
}

/** A running proxy on 127.0.0.1. */
export interface TcpProxy {
  /** The loopback port it listens on. */
  readonly port: number;
  /**
   * Cuts the process off: every open connection is destroyed in both directions, and new connections
   * are accepted but hang (no byte goes either way), as with a peer that does not answer, until
   * {@link unblock}.
   */
  block(): void;
  /** Heals the partition: connections held while blocked are closed (their clients retry), new ones go through. */
  unblock(): void;
  /** Closes the listener and every connection. */
  stop(): Promise<void>;
}

/** Starts a proxy to `target` on a free loopback port. */
export async function startTcpProxy(target: TcpProxyTarget): Promise<TcpProxy> {
  const piped = new Set<Socket>(); // both ends of every connection that goes through
  const held = new Set<Socket>(); // clients that connected while blocked: read from by no one
  let blocked = false;

  const track = (set: Set<Socket>, socket: Socket) => {
    set.add(socket);
    socket.once("close", () => set.delete(socket));
  };
  const pipeToTarget = (client: Socket) => {
    const upstream = connect({ host: target.host, port: target.port });
    track(piped, client);
    track(piped, upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", closeBoth);
      socket.once("close", closeBoth);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = createServer((client) => {
    if (!blocked) return pipeToTarget(client);
    client.on("error", () => {}); // destroyed by unblock or stop; nothing to report
    track(held, client);
  });
  const destroyAll = (set: Set<Socket>) => {
    for (const socket of [...set]) socket.destroy();
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the TCP proxy has no port");

  return {
    port: address.port,
    block() {
      blocked = true;
      destroyAll(piped);
    },
    unblock() {
      blocked = false;
      destroyAll(held);
    },
    async stop() {
      destroyAll(piped);
      destroyAll(held);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
