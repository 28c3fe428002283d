import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { drawListeningPort, freePorts, listeningRange } from "../../../src/util/free-ports.ts";

const held: Server[] = [];
afterEach(async () => {
  await Promise.all(held.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function hold(port: number): Promise<number> {
  const server = createServer();
  held.push(server);
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
}

describe("listeningRange", () => {
  it("lies between the well-known services and the kernel's ephemeral range", () => {
    expect(listeningRange({ low: 32_768, high: 60_999 })).toEqual({ low: 15_000, high: 32_767 });
  });

  it("is none when the ephemeral range leaves fewer than a thousand ports below it", () => {
    expect(listeningRange({ low: 15_999, high: 60_999 })).toBeUndefined();
    expect(listeningRange({ low: 1_024, high: 65_535 })).toBeUndefined();
    expect(listeningRange({ low: 16_000, high: 60_999 })).toEqual({ low: 15_000, high: 15_999 });
  });
});

describe("drawListeningPort", () => {
  it("never draws a port CAPD binds whatever its flags say (19000, 20000 up), drawing again instead", () => {
    const range = { low: 15_000, high: 32_767 };
    const at = (port: number) => (port - range.low) / (range.high - range.low + 1); // the draw that gives `port`
    const draws = (...ports: number[]) => {
      const queue = ports.map(at);
      return () => queue.shift() ?? at(15_000);
    };
    expect(drawListeningPort(range, draws(19_000, 20_000, 20_999, 19_001))).toBe(19_001);
    expect(drawListeningPort(range, draws(18_999))).toBe(18_999);
    expect(drawListeningPort(range, draws(21_000))).toBe(21_000);
    expect(drawListeningPort({ low: 20_000, high: 20_999 })).toBeUndefined(); // nothing but reserved ports
  });
});

describe("freePorts", () => {
  it("gives distinct ports below the ephemeral range, where no outgoing connection can take them", async () => {
    const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    const range = listeningRange({ low: ephemeralLow as number, high: 65_535 });
    expect(range, "this machine's ephemeral range leaves room below it").toBeDefined();
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(range?.low as number);
      expect(port).toBeLessThanOrEqual(range?.high as number);
    }
    // Each was closed again: it can be bound now.
    for (const port of ports) expect(await hold(port)).toBe(port);
  });

  it("keeps a preferred port that is free and replaces one that is taken", async () => {
    const [free] = await freePorts(1);
    const taken = await hold(0);
    const [first, second, third] = await freePorts(3, "127.0.0.1", [free, taken, undefined]);
    expect(first).toBe(free);
    expect(second).not.toBe(taken);
    expect(new Set([first, second, third]).size).toBe(3);
  });
});
