/** Finds free TCP ports on loopback for the processes of a control plane. */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

/** A range of TCP ports, both ends included. */
export interface PortRange {
  readonly low: number;
  readonly high: number;
}

/** Below this, ports belong to well-known services (kubelet's 10250, etcd's 2379, …). */
const LOWEST_LISTENING_PORT = 15_000;
/** Tries at a random port of the listening range before letting the OS pick one. */
const RANDOM_TRIES = 20;
/**
 * Ports Cluster API's Docker provider (CAPD) binds whatever its flags say: its in-memory mux's 19000 and its
 * workload API servers' from 20000 up (a thousand kept for them). A control plane drawn onto one of them made CAPD
 * exit with "bind: address already in use" (CI, 2026-11-30), so they are never drawn.
 */
export const RESERVED_PORTS: readonly PortRange[] = [
  { low: 19_000, high: 19_000 },
  { low: 20_000, high: 20_999 },
];

/** A random port of `range` that is not reserved ({@link RESERVED_PORTS}); undefined after many reserved draws. */
export function drawListeningPort(range: PortRange, random: () => number = Math.random): number | undefined {
  for (let i = 0; i < 100; i++) {
    const port = range.low + Math.floor(random() * (range.high - range.low + 1));
    if (!RESERVED_PORTS.some((reserved) => port >= reserved.low && port <= reserved.high)) return port;
  }
  return undefined;
}

/**
 * Returns `count` distinct ports that were free on `host` a moment ago: `preferred[i]` where that one is
 * free (so a restarted control plane keeps its address), else a random free one below the kernel's
 * ephemeral range, else one the OS picks.
 *
 * Why below that range: the OS gives outgoing connections (and listeners on port 0) ports from it, so a
 * port found there can be taken by any client's connection before our process binds it — seen with four
 * test files at once, an etcd failed with "address already in use". Below it only another listener can.
 *
 * Caveats: another listener may still take a port between this call and its use; callers retry the
 * whole start on "address already in use".
 */
export async function freePorts(
  count: number,
  host = "127.0.0.1",
  preferred: readonly (number | undefined)[] = [],
): Promise<number[]> {
  const range = listeningRange(ephemeralRange());
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const wanted = preferred[i];
      servers.push(
        (wanted === undefined ? undefined : await tryListen(host, wanted)) ??
          (await listenInRange(host, range)) ??
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

/**
 * The ports to draw listeners from, given the kernel's ephemeral range: those between the well-known
 * services and that range; none when the ephemeral range leaves fewer than a thousand there.
 */
export function listeningRange(ephemeral: PortRange): PortRange | undefined {
  const high = ephemeral.low - 1;
  return high - LOWEST_LISTENING_PORT + 1 >= 1_000 ? { low: LOWEST_LISTENING_PORT, high } : undefined;
}

/** The kernel's ephemeral port range (Linux's default where it cannot be read). */
function ephemeralRange(): PortRange {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low as number, high: high as number };
  } catch {
    // not Linux, or no /proc
  }
  return { low: 32_768, high: 60_999 };
}

async function listenInRange(host: string, range: PortRange | undefined): Promise<Server | undefined> {
  if (!range) return undefined;
  for (let i = 0; i < RANDOM_TRIES; i++) {
    const port = drawListeningPort(range);
    if (port === undefined) return undefined;
    const server = await tryListen(host, port);
    if (server) return server;
  }
  return undefined;
}

function tryListen(host: string, port: number): Promise<Server | undefined> {
  return listen(host, port).catch(() => undefined);
}

function listen(host: string, port: number): Promise<Server> {
  const server = createServer();
  return new Promise<Server>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
