/** Serves the live view: one read-only page, its diagrams, and Server-Sent Events with every change. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
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
  const routes = new LiveViewRoutes(options);
  const server = createServer((request, response) => routes.handle(request, response));
  const heartbeat = setInterval(() => {
    for (const stream of routes.streams) stream.write(": keep-alive\n\n");
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
      for (const stream of routes.streams) stream.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The server's answers, route by route; it keeps the machines' diagrams and the open event streams. */
class LiveViewRoutes {
  /** The event streams open now. */
  readonly streams = new Set<ServerResponse>();
  readonly #options: LiveViewServerOptions;
  readonly #title: string;
  /** Each machine's diagram, drawn once, by machine id. */
  readonly #charts = new Map<string, Promise<string>>();

  constructor(options: LiveViewServerOptions) {
    this.#options = options;
    this.#title = options.title ?? "openmcp-engine live view";
    for (const machine of options.machines ?? []) void this.#chartOf(machine);
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("read-only\n");
      return;
    }
    const fail = (error: unknown) => {
      this.#options.log.warn("live view request failed", { path, error: errorMessage(error) });
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end("internal error\n");
    };
    if (path === "/") this.#page(response).catch(fail);
    else if (path.startsWith("/charts/"))
      this.#chart(decodeURIComponent(path.slice("/charts/".length)), response, fail);
    else if (path === "/resources") this.#resources(response);
    else if (path === "/events") this.#events(request, response);
    else response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }

  /** The page, with the diagram of every machine known so far. */
  async #page(response: ServerResponse): Promise<void> {
    const machines = this.#knownMachines();
    const entries = await Promise.all(
      [...machines.values()].map(async (machine) => [machine.id, await this.#chartOf(machine)] as const),
    );
    const page = liveViewPage({ title: this.#title, charts: new Map(entries) });
    response
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": page.contentSecurityPolicy,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      })
      .end(page.html);
  }

  #chart(machineId: string, response: ServerResponse, fail: (error: unknown) => void): void {
    const machine = this.#knownMachines().get(machineId);
    if (!machine) {
      response.writeHead(404, { "content-type": "text/plain" }).end("no such machine\n");
      return;
    }
    this.#chartOf(machine)
      .then((svg) => response.writeHead(200, { "content-type": "image/svg+xml" }).end(svg))
      .catch(fail);
  }

  #resources(response: ServerResponse): void {
    response
      .writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
      .end(`${JSON.stringify({ resources: this.#options.view.resources() })}\n`);
  }

  /** A snapshot of every resource, then each change, until the client goes. */
  #events(request: IncomingMessage, response: ServerResponse): void {
    const { view } = this.#options;
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    response.write("retry: 2000\n\n");
    response.write(sse("snapshot", { resources: view.resources() }));
    const unsubscribe = view.subscribe((change: LiveViewChange) => {
      response.write(
        change.type === "resource" ? sse("resource", change.resource) : sse("removed", { uid: change.uid }),
      );
    });
    this.streams.add(response);
    request.on("close", () => {
      unsubscribe();
      this.streams.delete(response);
    });
  }

  #chartOf(machine: AnyStateMachine): Promise<string> {
    let chart = this.#charts.get(machine.id);
    if (!chart) {
      chart = layoutChart(statechartOf(machine)).then((layout) =>
        renderSvg(layout, {
          title: `The ${machine.id} statechart`,
          description: "Each state shows how many resources are in it, or whether the picked resource is.",
        }),
      );
      this.#charts.set(machine.id, chart);
    }
    return chart;
  }

  /** The machines given at the start and those of the resources seen since, by id. */
  #knownMachines(): Map<string, AnyStateMachine> {
    const all = new Map<string, AnyStateMachine>();
    for (const machine of this.#options.machines ?? []) all.set(machine.id, machine);
    for (const [id, machine] of this.#options.view.machines()) all.set(id, machine);
    return all;
  }
}

/** One Server-Sent Event; JSON has no raw newlines, so one `data:` line suffices. */
function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
