/** The Stately inspector relay: a WebSocket server on loopback that passes inspection events to browsers, with replay. */
import { createServer, type Server } from "node:http";
import { WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../runtime/logger.ts";
import { listenOn } from "./listen.ts";

/** Where and how to serve. */
export interface InspectorServerOptions {
  /** Interface to bind; loopback unless the user says otherwise. */
  readonly host: string;
  /** Port; 0 picks a free one. */
  readonly port: number;
  readonly log: Logger;
  /** Events and snapshots kept per actor for browsers that connect later (default 20). */
  readonly recentPerActor?: number;
  /** The Stately inspector UI the page embeds (default https://stately.ai/inspect). */
  readonly inspectorUrl?: string;
}

/** A running relay. */
export interface InspectorServer {
  /** Where producers (the engine's inspector) and other WebSocket clients connect. */
  readonly webSocketUrl: string;
  /** The page to open in a browser: it embeds the Stately inspector and feeds it from this relay. */
  readonly pageUrl: string;
  close(): Promise<void>;
}

/** What the relay reads of a message to keep its replay: the actor it is about and what it says. */
interface InspectionHeader {
  readonly type?: unknown;
  readonly sessionId?: unknown;
  readonly snapshot?: { readonly status?: unknown };
}

/** What one actor's late viewers need: its registration (with the definition) and its latest messages. */
interface ActorReplay {
  actor: string | undefined;
  recent: string[];
}

/**
 * Starts the relay. Every text message a client sends goes to every other client, as the relay of
 * `@statelyai/inspect/server` does; unlike that one it binds to the interface it is given (not all of
 * them), opens no browser, and replays per actor (registration, then its latest events and snapshots)
 * instead of the last 200 messages overall, so a browser opened late still sees every resource.
 *
 * Guarantees: messages reach each client in the order the producer sent them; an actor whose snapshot
 * says `stopped` is dropped from the replay (memory stays bounded by the live resources).
 */
export async function startInspectorServer(options: InspectorServerOptions): Promise<InspectorServer> {
  const keep = options.recentPerActor ?? 20;
  const inspectorUrl = options.inspectorUrl ?? "https://stately.ai/inspect";
  const replay = new Map<string, ActorReplay>();
  const http: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" || path !== "/") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    response
      .writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
      .end(bridgePage(inspectorUrl));
  });
  const sockets = new WebSocketServer({ server: http });
  sockets.on("connection", (socket) => {
    for (const entry of replay.values()) {
      if (entry.actor === undefined) continue;
      socket.send(entry.actor);
      for (const message of entry.recent) socket.send(message);
    }
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      const text = data.toString();
      remember(replay, text, keep);
      for (const client of sockets.clients) {
        if (client !== socket && client.readyState === WebSocket.OPEN) client.send(text);
      }
    });
    socket.on("error", (error) => options.log.debug("inspector client error", { error: error.message }));
  });
  const { port, address } = await listenOn(http, options.host, options.port);
  const server: InspectorServer = {
    webSocketUrl: `ws://${address}`,
    pageUrl: `http://${address}/`,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  options.log.info("Stately inspector relay listening", { host: options.host, port, page: server.pageUrl });
  return server;
}

/** Adds one message to the replay of its actor; registrations start an entry, stopped snapshots end it. */
function remember(replay: Map<string, ActorReplay>, text: string, keep: number): void {
  let header: InspectionHeader;
  try {
    header = JSON.parse(text) as InspectionHeader;
  } catch {
    return; // not an inspection event: relayed, not replayed
  }
  if (typeof header.sessionId !== "string") return;
  if (header.type === "@xstate.actor") {
    replay.set(header.sessionId, { actor: text, recent: [] });
    return;
  }
  const entry = replay.get(header.sessionId);
  if (!entry) return;
  if (header.type === "@xstate.snapshot" && header.snapshot?.status === "stopped") {
    replay.delete(header.sessionId);
    return;
  }
  entry.recent.push(text);
  if (entry.recent.length > keep) entry.recent.splice(0, entry.recent.length - keep);
}

/**
 * The page a browser opens: the Stately inspector in a frame, fed over this relay's WebSocket (same host
 * and port as the page). Events wait until the inspector says it is connected.
 */
function bridgePage(inspectorUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>openmcp-engine: Stately inspector</title>
<style>html, body { margin: 0; height: 100%; } iframe { border: 0; width: 100%; height: 100%; }</style>
</head>
<body>
<iframe id="inspector" src="${inspectorUrl.replaceAll('"', "&quot;")}" title="Stately inspector"></iframe>
<script>
const frame = document.getElementById("inspector");
const waiting = [];
let connected = false;
window.addEventListener("message", (event) => {
  if (event.data && event.data.type === "@statelyai.connected") {
    connected = true;
    for (const data of waiting.splice(0)) frame.contentWindow.postMessage(data, "*");
  }
});
const socket = new WebSocket("ws://" + location.host);
socket.onmessage = (event) => {
  const data = JSON.parse(event.data);
  if (connected) frame.contentWindow.postMessage(data, "*");
  else waiting.push(data);
};
</script>
</body>
</html>
`;
}
