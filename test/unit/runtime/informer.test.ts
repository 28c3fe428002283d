/** The informer's recovery paths against a scripted list/watch source on a fake clock. */
import type { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  Informer,
  type InformerEvent,
  type ListPage,
  type ListWatchSource,
} from "../../../src/runtime/informer.ts";
import { expectOneMoreAt, FakeClock, settle } from "../../support/fake-clock.ts";

interface Thing {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string };
}
const thing = (name: string, resourceVersion: string): Thing => ({
  metadata: { name, namespace: "ns", resourceVersion },
});

/** A source whose list answers and open watches the test controls. */
class ScriptedSource implements ListWatchSource<Thing> {
  lists: Array<() => ListPage<Thing>> = [];
  listCalls: Array<{ continue?: string }> = [];
  watches: Array<{
    resourceVersion: string;
    emit: (type: string, object: Thing) => void;
    end: (error?: unknown) => void;
    aborted: boolean;
  }> = [];

  async list(params: { continue?: string }): Promise<ListPage<Thing>> {
    this.listCalls.push(params);
    const next = this.lists.shift();
    if (!next) throw new Error("list refused");
    return next();
  }

  async watch(
    params: { resourceVersion: string },
    onEvent: (type: string, object: Thing) => void,
    onDone: (error: unknown) => void,
  ) {
    const watch = {
      resourceVersion: params.resourceVersion,
      emit: onEvent,
      end: (error?: unknown) => onDone(error ?? null),
      aborted: false,
    };
    this.watches.push(watch);
    return { abort: () => (watch.aborted = true) };
  }
}

function informerWith(source: ScriptedSource, clock = new FakeClock()) {
  const events: Array<InformerEvent<Thing>> = [];
  const errors: unknown[] = [];
  const informer = new Informer<Thing>({
    kubeConfig: {} as KubeConfig,
    resource: { group: "example.com", version: "v1", plural: "things" },
    kind: "Thing",
    clock,
    source,
    onError: (error) => errors.push(error),
  });
  informer.on((event) => events.push(event));
  return { informer, events, errors, clock };
}

describe("Informer", () => {
  it("lists every page, then watches from the list's resourceVersion", async () => {
    const source = new ScriptedSource();
    source.lists.push(
      () => ({ items: [thing("a", "1")], metadata: { continue: "page-2" } }),
      () => ({ items: [thing("b", "2")], metadata: { resourceVersion: "10" } }),
    );
    const { informer, events } = informerWith(source);
    await informer.start();
    expect(source.listCalls.map((c) => c.continue)).toEqual([undefined, "page-2"]);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.list().map((t) => t.metadata.name)).toEqual(["a", "b"]);
    expect(events.map((e) => `${e.type} ${e.key}`)).toEqual(["upsert ns/a", "upsert ns/b"]);
    await settle();
    expect(source.watches.map((w) => w.resourceVersion)).toEqual(["10"]);
  });

  it("applies watch events to the cache and resumes from the last resourceVersion when a watch ends", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({ items: [thing("a", "1")], metadata: { resourceVersion: "5" } }));
    const { informer, events, clock } = informerWith(source);
    await informer.start();
    await settle();
    const watch = source.watches[0];
    watch?.emit("ADDED", thing("b", "6"));
    watch?.emit("MODIFIED", thing("a", "7"));
    watch?.emit("DELETED", thing("b", "8"));
    watch?.emit("BOOKMARK", { metadata: { name: "", resourceVersion: "9" } });
    expect(informer.list()).toEqual([thing("a", "7")]);
    expect(events.slice(1).map((e) => `${e.type} ${e.key}`)).toEqual([
      "upsert ns/b",
      "upsert ns/a",
      "delete ns/b",
    ]);
    clock.advance(5_000);
    watch?.end();
    await settle();
    expect(source.watches.map((w) => w.resourceVersion)).toEqual(["5", "9"]);
  });

  it("keeps no managedFields in its cache, from lists and watches alike", async () => {
    const source = new ScriptedSource();
    const fat = (name: string, resourceVersion: string) =>
      ({
        metadata: {
          ...thing(name, resourceVersion).metadata,
          managedFields: [{ manager: "kubectl", fieldsV1: {} }],
        },
      }) as unknown as Thing;
    source.lists.push(() => ({ items: [fat("a", "1")], metadata: { resourceVersion: "5" } }));
    const { informer, events } = informerWith(source);
    await informer.start();
    await settle();
    source.watches[0]?.emit("MODIFIED", fat("b", "6"));
    for (const cached of informer.list()) expect(cached.metadata).not.toHaveProperty("managedFields");
    for (const event of events) expect(event.object.metadata).not.toHaveProperty("managedFields");
    expect(informer.get("ns/b")?.metadata).toEqual({ name: "b", namespace: "ns", resourceVersion: "6" });
  });

  it("resumes at once, without an error, when the client's inactivity timeout ends a quiet watch", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({ items: [thing("a", "1")], metadata: { resourceVersion: "5" } }));
    const { informer, errors } = informerWith(source);
    await informer.start();
    await settle();
    // What client-node's Watch hands to done() after 30 s without data.
    source.watches[0]?.end(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    await settle();
    expect(source.watches.map((w) => w.resourceVersion)).toEqual(["5", "5"]);
    expect(errors).toEqual([]);
    // A real failure is still reported (and waited out with backoff).
    source.watches[1]?.end(new Error("connect ECONNREFUSED 127.0.0.1:6443"));
    await settle();
    expect(errors.map((error) => (error as Error).message)).toEqual(["connect ECONNREFUSED 127.0.0.1:6443"]);
    expect(source.watches).toHaveLength(2);
  });

  it("relists on 410 Gone, emitting deletes for objects that vanished meanwhile", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({
      items: [thing("a", "1"), thing("b", "2")],
      metadata: { resourceVersion: "5" },
    }));
    const { informer, events } = informerWith(source);
    await informer.start();
    await settle();
    source.lists.push(() => ({
      items: [thing("b", "2"), thing("c", "40")],
      metadata: { resourceVersion: "50" },
    }));
    source.watches[0]?.emit("ERROR", { code: 410 } as unknown as Thing);
    source.watches[0]?.end();
    await settle();
    await settle();
    expect(informer.list().map((t) => t.metadata.name)).toEqual(["b", "c"]);
    expect(events.slice(2).map((e) => `${e.type} ${e.key}`)).toEqual(["delete ns/a", "upsert ns/c"]);
    expect(source.watches.map((w) => w.resourceVersion)).toEqual(["5", "50"]);
  });

  it("reconnects after errors with growing backoff, reset once events flow again", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({ items: [], metadata: { resourceVersion: "5" } }));
    const { informer, errors, clock } = informerWith(source);
    await informer.start();
    await settle();
    source.watches[0]?.end(new Error("connection reset"));
    await settle();
    expect(source.watches).toHaveLength(1);
    await expectOneMoreAt(clock, 200, () => source.watches, 1);
    source.watches[1]?.end(new Error("connection reset"));
    await settle();
    await expectOneMoreAt(clock, 400, () => source.watches, 2);
    expect(errors).toHaveLength(2);
    source.watches[2]?.emit("ADDED", thing("x", "6"));
    source.watches[2]?.end(new Error("connection reset"));
    await settle();
    clock.advance(200); // back to the first delay
    await settle();
    expect(source.watches.map((w) => w.resourceVersion)).toEqual(["5", "5", "5", "6"]);
  });

  it("does not spin when a watch closes at once without a word", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({ items: [], metadata: { resourceVersion: "5" } }));
    const { informer, clock } = informerWith(source);
    await informer.start();
    await settle();
    source.watches[0]?.end();
    await settle();
    expect(source.watches).toHaveLength(1);
    clock.advance(200);
    await settle();
    expect(source.watches).toHaveLength(2);
  });

  it("retries a failing first list until it succeeds, and start resolves only then", async () => {
    const source = new ScriptedSource();
    const { informer, clock } = informerWith(source);
    let started = false;
    const starting = informer.start().then(() => (started = true));
    await settle();
    expect(started).toBe(false);
    source.lists.push(() => ({ items: [thing("a", "1")], metadata: { resourceVersion: "3" } }));
    clock.advance(200);
    await starting;
    expect(informer.hasSynced()).toBe(true);
  });

  it("stops watching on stop", async () => {
    const source = new ScriptedSource();
    source.lists.push(() => ({ items: [], metadata: { resourceVersion: "5" } }));
    const { informer } = informerWith(source);
    await informer.start();
    await settle();
    informer.stop();
    expect(source.watches[0]?.aborted).toBe(true);
    source.watches[0]?.end();
    await settle();
    expect(source.watches).toHaveLength(1);
  });
});
