/** The inspector relay: passes messages between clients, replays each live actor to late ones, serves the bridge page. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { silentLogger } from "../../../src/runtime/logger.ts";
import { type InspectorServer, startInspectorServer } from "../../../src/views/inspector-server.ts";
import { eventually } from "../../support/eventually.ts";

let relay: InspectorServer;
const open: WebSocket[] = [];

beforeEach(async () => {
  relay = await startInspectorServer({ host: "127.0.0.1", port: 0, log: silentLogger, recentPerActor: 2 });
});

afterEach(async () => {
  for (const socket of open.splice(0)) socket.close();
  await relay.close();
});

async function client(): Promise<{ socket: WebSocket; received: string[] }> {
  const socket = new WebSocket(relay.webSocketUrl);
  open.push(socket);
  const received: string[] = [];
  socket.on("message", (data) => received.push(data.toString()));
  await new Promise((resolve) => socket.once("open", resolve));
  return { socket, received };
}

const actor = (sessionId: string) => JSON.stringify({ type: "@xstate.actor", sessionId, name: sessionId });
const snapshot = (sessionId: string, value: string, status = "active") =>
  JSON.stringify({ type: "@xstate.snapshot", sessionId, snapshot: { status, value } });

describe("the inspector relay", () => {
  it("sends each message to every other client, in order, and not back to its sender", async () => {
    const producer = await client();
    const viewer = await client();
    for (const message of [actor("a"), snapshot("a", "one"), snapshot("a", "two")])
      producer.socket.send(message);
    await eventually(
      () => expect(viewer.received).toEqual([actor("a"), snapshot("a", "one"), snapshot("a", "two")]),
      { what: "the viewer to receive the three messages", timeoutMs: 5_000 },
    );
    // Had the relay echoed them, they would reach the producer before a message the viewer sends now.
    viewer.socket.send("marker");
    await eventually(() => expect(producer.received).toContain("marker"), { timeoutMs: 5_000 });
    expect(producer.received).toEqual(["marker"]);
  });

  it("replays to a late client each live actor's registration and its latest messages, not stopped actors", async () => {
    const producer = await client();
    const viewer = await client();
    producer.socket.send(actor("a"));
    for (const value of ["one", "two", "three"]) producer.socket.send(snapshot("a", value));
    producer.socket.send(actor("b"));
    producer.socket.send(snapshot("b", "one", "stopped"));
    producer.socket.send("not json");
    // The relay handles one client's messages in order: once the last is passed on, all are remembered.
    await eventually(() => expect(viewer.received).toContain("not json"), { timeoutMs: 5_000 });
    const late = await client();
    // The replay comes first on a connection, so it is complete once a later live message arrives.
    producer.socket.send(snapshot("a", "four"));
    await eventually(() => expect(late.received).toContain(snapshot("a", "four")), { timeoutMs: 5_000 });
    expect(late.received).toEqual([
      actor("a"),
      snapshot("a", "two"),
      snapshot("a", "three"),
      snapshot("a", "four"),
    ]);
  });

  it("serves the page that embeds the Stately inspector and feeds it from the same host and port", async () => {
    expect(relay.pageUrl).toBe(relay.webSocketUrl.replace("ws://", "http://").concat("/"));
    const page = await fetch(relay.pageUrl);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('src="https://stately.ai/inspect"');
    expect(html).toContain('new WebSocket("ws://" + location.host)');
    expect((await fetch(new URL("/other", relay.pageUrl))).status).toBe(404);
  });
});
