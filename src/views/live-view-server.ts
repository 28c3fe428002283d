/** Serves the live view: one read-only page, its diagrams, and Server-Sent Events with every change. */
import { createServer, type ServerResponse } from "node:http";
import type { AnyStateMachine } from "xstate";
import { errorMessage, type Logger } from "../runtime/logger.ts";
import { statechartOf } from "../statecharts/graph.ts";
import { renderSvg } from "../statecharts/svg.ts";
import { layoutChart } from "../statecharts/svg-layout.ts";
import { listenOn } from "./listen.ts";
import type { LiveViewChange, LiveViewModel } from "./live-view-model.ts";
import { liveViewPage } from "./live-view-page.ts";

/** Where and what to serve. */
export interface LiveViewServerOptions {
  /** Interface to bind; loopback unless the user says otherwise. */
  readonly host: string;
  /** Port; 0 picks a free one. */
  readonly port: number;
  readonly view: LiveViewModel;
  /** Machines whose diagrams the page carries from the start; others are drawn when first seen. */
  readonly machines?: readonly AnyStateMachine[];
  readonly log: Logger;
  /** Page title. Default "openmcp-engine live view". */
  readonly title?: string;
  /** A comment line on every event stream this often, so proxies and browsers keep it open. Default 15 s. */
  readonly heartbeatMs?: number;
}

/** A running live view server. */
export interface LiveViewServer {
  /** The page, e.g. `http://127.0.0.1:8083/`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts the server. Routes (GET only): `/` the page, `/events` the event stream (a `snapshot` of every
 * resource on connect, then `resource` and `removed` events), `/charts/<machine id>` a machine's diagram,
 * `/resources` every resource as JSON.
 *
 * Guarantees: read-only (nothing here writes anywhere); the page loads nothing from outside this server
 * (its Content-Security-Policy allows only its own inline style and script and connections to itself), so
 * it works without internet access.
 */
export async function startLiveViewServer(options: LiveViewServerOptions): Promise<LiveViewServer> {
  const title = options.title ?? "openmcp-engine live view";
  const charts = new Map<string, Promise<string>>();
  const chartOf = (machine: AnyStateMachine) => {
    let chart = charts.get(machine.id);
    if (!chart) {
      chart = layoutChart(statechartOf(machine)).then((layout) =>
        renderSvg(layout, {
          title: `The ${machine.id} statechart`,
          description: "Each state shows how many resources are in it, or whether the picked resource is.",
        }),
      );
      charts.set(machine.id, chart);
    }
    return chart;
  };
  for (const machine of options.machines ?? []) void chartOf(machine);
  const knownMachines = () => {
    const all = new Map<string, AnyStateMachine>();
    for (const machine of options.machines ?? []) all.set(machine.id, machine);
    for (const [id, machine] of options.view.machines()) all.set(id, machine);
    return all;
  };

  const streams = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("read-only\n");
      return;
    }
    const fail = (error: unknown) => {
      options.log.warn("live view request failed", { path, error: errorMessage(error) });
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end("internal error\n");
    };
    if (path === "/") {
      const machines = knownMachines();
      Promise.all(
        [...machines.values()].map(async (machine) => [machine.id, await chartOf(machine)] as const),
      )
        .then((entries) => {
          const page = liveViewPage({ title, charts: new Map(entries) });
          response
            .writeHead(200, {
              "content-type": "text/html; charset=utf-8",
              "content-security-policy": page.contentSecurityPolicy,
              "cache-control": "no-store",
              "x-content-type-options": "nosniff",
            })
            .end(page.html);
        })
        .catch(fail);
    } else if (path.startsWith("/charts/")) {
      const machine = knownMachines().get(decodeURIComponent(path.slice("/charts/".length)));
      if (!machine) {
        response.writeHead(404, { "content-type": "text/plain" }).end("no such machine\n");
        return;
      }
      chartOf(machine)
        .then((svg) => response.writeHead(200, { "content-type": "image/svg+xml" }).end(svg))
        .catch(fail);
    } else if (path === "/resources") {
      response
        .writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
        .end(`${JSON.stringify({ resources: options.view.resources() })}\n`);
    } else if (path === "/events") {
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      response.write("retry: 2000\n\n");
      response.write(sse("snapshot", { resources: options.view.resources() }));
      const unsubscribe = options.view.subscribe((change: LiveViewChange) => {
        response.write(
          change.type === "resource" ? sse("resource", change.resource) : sse("removed", { uid: change.uid }),
        );
      });
      streams.add(response);
      request.on("close", () => {
        unsubscribe();
        streams.delete(response);
      });
    } else {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  const heartbeat = setInterval(() => {
    for (const stream of streams) stream.write(": keep-alive\n\n");
  }, options.heartbeatMs ?? 15_000);
  heartbeat.unref();

  const { port, address } = await listenOn(server, options.host, options.port);
  const url = `http://${address}/`;
  options.log.info("live view listening", { host: options.host, port, url });
  return {
    url,
    port,
    close: async () => {
      clearInterval(heartbeat);
      for (const stream of streams) stream.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** One Server-Sent Event; JSON has no raw newlines, so one `data:` line suffices. */
function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
