/** `--inspect` end to end: a Cluster's lifecycle on a real API server, as a WebSocket client on loopback receives it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { type InspectorServer, startInspectorServer } from "../../src/views/inspector-server.ts";
import { StatelyInspector } from "../../src/views/stately-inspector.ts";
import { eventually } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

/** What the relay sends, as far as these tests read it. */
interface Inspection {
  readonly type: string;
  readonly sessionId: string;
  readonly name?: string;
  readonly definition?: string;
  readonly event?: {
    readonly type: string;
    readonly facts?: { readonly backend?: { readonly phase?: string } };
  };
  readonly snapshot?: { readonly value?: unknown; readonly status?: string };
}

let world: World;
let relay: InspectorServer;
let inspector: StatelyInspector;

beforeAll(async () => {
  relay = await startInspectorServer({ host: "127.0.0.1", port: 0, log: silentLogger });
  inspector = new StatelyInspector({ url: relay.webSocketUrl });
  world = await startWorld({
    backend: new SimulatedBackend({ provisionDelayMs: 500, deleteDelayMs: 200 }),
    engine: { recordEvents: false, observers: [inspector] },
  });
});

afterAll(async () => {
  await world?.stop();
  inspector?.close();
  await relay?.close();
});

/** A client of the relay that collects every message and can send one. */
async function connect(
  url: string,
): Promise<{ messages: Inspection[]; send(text: string): void; close(): void }> {
  const socket = new WebSocket(url);
  const messages: Inspection[] = [];
  socket.on("message", (data) => messages.push(JSON.parse(data.toString()) as Inspection));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return { messages, send: (text) => socket.send(text), close: () => socket.close() };
}

const isReadySnapshot = (m: Inspection) => m.type === "@xstate.snapshot" && m.snapshot?.value === "ready";

describe("--inspect", () => {
  it("streams one actor per Cluster with its definition, then its events and snapshots in order, ending in ready", async () => {
    expect(relay.webSocketUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const client = await connect(relay.webSocketUrl);
    try {
      const created = await world.createCluster("inspected");
      const uid = created.metadata.uid ?? "";
      await world.waitFor("inspected", isReady);
      // Later reconciles of a Ready Cluster still send pairs: take the messages up to a snapshot, a whole pair.
      const messages = await eventually(
        () => {
          const ofCluster = client.messages.filter((message) => message.sessionId === uid);
          expect(ofCluster.some(isReadySnapshot)).toBe(true);
          expect(ofCluster.at(-1)?.type).toBe("@xstate.snapshot");
          return ofCluster;
        },
        { what: "a ready snapshot, and the messages ending with a snapshot" },
      );

      const [registration, ...rest] = messages;
      expect(registration).toMatchObject({
        type: "@xstate.actor",
        sessionId: uid,
        name: "Cluster/clusters/inspected",
        snapshot: { status: "active", value: "pending" },
      });
      const definition = JSON.parse(registration?.definition ?? "null") as {
        id: string;
        initial: string;
        states: Record<string, unknown>;
      };
      expect(definition.id).toBe("cluster");
      expect(definition.initial).toBe("pending");
      expect(Object.keys(definition.states).sort()).toEqual(
        [
          "claimingPoolMember",
          "deleting",
          "failed",
          "hibernated",
          "hibernating",
          "pending",
          "provisioning",
          "ready",
          "takingOver",
          "updating",
          "waking",
        ].sort(),
      );
      expect(rest.some((m) => m.type === "@xstate.actor")).toBe(false);

      // Strictly event, snapshot, event, snapshot, …: each snapshot the result of the event before it.
      expect(rest.length % 2).toBe(0);
      for (let index = 0; index < rest.length; index += 2) {
        const event = rest[index];
        const snapshot = rest[index + 1];
        expect(event?.type).toBe("@xstate.event");
        expect(event?.event?.type).toBe("observed");
        expect(snapshot?.type).toBe("@xstate.snapshot");
        expect(snapshot?.event).toEqual(event?.event);
        expect(snapshot?.snapshot?.status).toBe("active");
      }
      const values = rest.filter((m) => m.type === "@xstate.snapshot").map((m) => m.snapshot?.value);
      const distinct = values.filter((value, index) => value !== values[index - 1]);
      expect(distinct).toEqual(["provisioning", "ready"]);
      const lastEvent = rest.filter((m) => m.type === "@xstate.event").at(-1);
      expect(lastEvent?.event?.facts?.backend?.phase).toBe("ready");
    } finally {
      client.close();
    }
  });

  it("replays every live actor to a browser that connects later, and ends an actor when its Cluster goes", async () => {
    const watcher = await connect(relay.webSocketUrl);
    const created = await world.createCluster("late");
    const uid = created.metadata.uid ?? "";
    await world.waitFor("late", isReady);
    // The relay has the ready snapshot once it has passed it on.
    await eventually(() => watcher.messages.some((m) => m.sessionId === uid && isReadySnapshot(m)), {
      what: "the relay to pass on the ready snapshot",
    });
    watcher.close();
    const late = await connect(relay.webSocketUrl);
    try {
      await eventually(
        () => {
          const replayed = late.messages.filter((m) => m.sessionId === uid);
          expect(replayed[0]).toMatchObject({ type: "@xstate.actor", name: "Cluster/clusters/late" });
          expect(replayed.at(-1)).toMatchObject({ type: "@xstate.snapshot", snapshot: { value: "ready" } });
        },
        { what: "the replay, ending with the ready snapshot" },
      );

      await world.custom.deleteNamespacedCustomObject({
        group: "clusters.openmcp.cloud",
        version: "v1alpha1",
        plural: "clusters",
        namespace: world.namespace,
        name: "late",
      });
      await world.waitFor("late", (cluster) => cluster === undefined);
      await eventually(
        () => late.messages.some((m) => m.sessionId === uid && m.snapshot?.status === "stopped"),
        {
          what: "a stopped snapshot",
        },
      );
      const values = late.messages
        .filter((m) => m.sessionId === uid && m.type === "@xstate.snapshot")
        .map((m) => JSON.stringify(m.snapshot?.value));
      expect(values).toContain(JSON.stringify({ deleting: "releasing" }));
    } finally {
      late.close();
    }
    const afterwards = await connect(relay.webSocketUrl);
    // The replay comes first on a connection: a message sent after it arrives after the whole replay.
    const sender = await connect(relay.webSocketUrl);
    sender.send(JSON.stringify({ type: "test.marker" }));
    await eventually(() => afterwards.messages.some((m) => m.type === "test.marker"), { what: "the marker" });
    expect(afterwards.messages.some((m) => m.sessionId === uid)).toBe(false);
    sender.close();
    afterwards.close();
  });
});
