/** The HTTP endpoints of a controller: /healthz and /readyz for the kubelet, /metrics for Prometheus. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "./logger.ts";
import type { EngineMetrics } from "./metrics.ts";

/** Where to listen, controller-runtime style: `:8080` (all interfaces), `127.0.0.1:8080`, `0` to turn off. */
export type BindAddress = string;

/** What the endpoints report. */
export interface ProbeServerOptions {
  readonly metricsAddress: BindAddress;
  readonly healthAddress: BindAddress;
  readonly metrics: EngineMetrics;
  /** Ready once the caches are synced (leader or not: a standby replica is ready to take over). */
  readonly ready: () => boolean;
  /** Lines /readyz adds after its verdict, e.g. what the engine leaves to others. */
  readonly details?: () => readonly string[];
  readonly log: Logger;
}

/** The running servers; ports are the ones actually bound (useful with port 0 in tests). */
export interface ProbeServers {
  readonly metricsPort: number | undefined;
  readonly healthPort: number | undefined;
  close(): Promise<void>;
}

/** Parses `:8080`, `127.0.0.1:8080` or `[::1]:8080`; undefined for `0` (off). */
export function parseBindAddress(address: BindAddress): { host: string; port: number } | undefined {
  if (address === "0") return undefined;
  const match = /^(?:\[?([^\]]*?)\]?)?:(\d+)$/.exec(address);
  if (!match) throw new Error(`bind address "${address}" must look like :8080, 127.0.0.1:8080 or 0 (off)`);
  return { host: match[1] || "0.0.0.0", port: Number(match[2]) };
}

/** Starts both servers (or one, if they share an address). */
export async function startProbeServers(options: ProbeServerOptions): Promise<ProbeServers> {
  const metrics = parseBindAddress(options.metricsAddress);
  const health = parseBindAddress(options.healthAddress);
  const servers: Server[] = [];
  const listen = async (bind: { host: string; port: number }, routes: string[]) => {
    const server = createServer((request, response) => {
      const path = (request.url ?? "/").split("?")[0] ?? "/";
      if (!routes.includes(path) || request.method !== "GET") {
        response.writeHead(404).end("not found\n");
        return;
      }
      if (path === "/healthz") {
        response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      } else if (path === "/readyz") {
        const ready = options.ready();
        const details = (options.details?.() ?? []).map((line) => `${line}\n`).join("");
        response
          .writeHead(ready ? 200 : 503, { "content-type": "text/plain" })
          .end(`${ready ? "ok" : "caches not synced"}\n${details}`);
      } else {
        options.metrics.registry.metrics().then(
          (text) =>
            response.writeHead(200, { "content-type": options.metrics.registry.contentType }).end(text),
          (error: unknown) => response.writeHead(500).end(`${String(error)}\n`),
        );
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(bind.port, bind.host, resolve);
    });
    servers.push(server);
    return (server.address() as AddressInfo).port;
  };
  const same = metrics && health && metrics.host === health.host && metrics.port === health.port;
  const metricsPort = metrics
    ? await listen(metrics, same ? ["/metrics", "/healthz", "/readyz"] : ["/metrics"])
    : undefined;
  const healthPort = same ? metricsPort : health ? await listen(health, ["/healthz", "/readyz"]) : undefined;
  options.log.info("serving probes", { metricsPort, healthPort });
  return {
    metricsPort,
    healthPort,
    close: async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
