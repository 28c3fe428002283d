/** The machine controller on an in-memory writer: what a reconcile writes, how a conflict is retried, and that rest writes nothing. */
import { describe, expect, it } from "vitest";
import { createMachine } from "xstate";
import type { ObjectMeta } from "../../../src/api/common.ts";
import { silentLogger } from "../../../src/api/logger.ts";
import { applied, type PatchOperation } from "../../../src/machines/shared/json-patch.ts";
import type { MachineDefinition } from "../../../src/machines/shared/machine-definition.ts";
import type { MachineStep } from "../../../src/machines/shared/machine-step.ts";
import type { PatchTarget, RemoveTarget } from "../../../src/runtime/api-server/patch-object.ts";
import { classifyFailure } from "../../../src/runtime/controllers/error-policy.ts";
import { ConflictError } from "../../../src/runtime/controllers/errors.ts";
import type { EventRecord } from "../../../src/runtime/event-recorder.ts";
import { Informer, type ListWatchSource } from "../../../src/runtime/informer.ts";
import type { CacheSpec, InformerSet } from "../../../src/runtime/informers.ts";
import { MachineController } from "../../../src/runtime/machine-controller.ts";
import type { KindContext, MachineKind } from "../../../src/runtime/machine-kind.ts";
import type { MachineWriter } from "../../../src/runtime/machine-writer.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { nowhereKubeConfig } from "../../support/nowhere.ts";

/** A made-up kind: a Widget is Ready once it carries our finalizer and says so in its status. */
interface Widget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly status?: { readonly phase?: string };
}

const RESOURCE = { group: "test.example", version: "v1", plural: "widgets", namespaced: true };
const FINALIZER = "test.example/widget";

const WIDGET_DEFINITION: MachineDefinition = {
  kind: "Widget",
  apiVersion: "test.example/v1",
  resource: RESOURCE,
  names: ["widget", "widgets"],
  machine: createMachine({ id: "widget", initial: "pending", states: { pending: {}, ready: {} } }),
  statechart: { file: "widget", source: "test/unit/runtime/machine-controller.test.ts" },
  guardPhrases: {},
};

const WIDGETS: CacheSpec<Widget> = { name: "Widget", kind: "Widget", resource: RESOURCE };

/** The step: finalizer and Ready; an Event only on the way there. */
function stepWidget(widget: Widget): MachineStep<ObjectMeta, Widget["status"], never> {
  const ready = widget.status?.phase === "Ready";
  return {
    previousState: ready ? "ready" : "pending",
    event: { type: "look" },
    state: "ready",
    desired: {
      metadata: { ...widget.metadata, finalizers: [FINALIZER] },
      status: { phase: "Ready" },
    },
    commands: [],
    events: ready ? [] : [{ type: "Normal", reason: "Ready", message: "the widget is ready" }],
    requeueAfterMs: undefined,
  };
}

const widgetKind: MachineKind<Widget, undefined, never> = {
  definition: WIDGET_DEFINITION,
  cache: WIDGETS,
  wakes: [],
  timing: { pollMs: 1_000, retryMs: 1_000, resyncMs: 60_000 },
  open: async () => ({
    observe: async () => undefined,
    step: (object) => stepWidget(object),
    run: async () => {},
  }),
  describe: (command) => command,
  explain: async () => ({ state: "ready", phase: "Ready", why: [], waitingFor: [] }) as never,
};

/** An API server of one kind in memory: guarded patches as the real one applies them, Events kept. */
class MemoryWriter implements MachineWriter {
  readonly objects = new Map<string, Widget>();
  readonly patches: Array<{ subresource: "status" | undefined; operations: readonly PatchOperation[] }> = [];
  readonly events: EventRecord[] = [];
  /** Someone else's write lands just before our next patch this many times. */
  interferences = 0;
  #version = 1;

  put(widget: Widget): Widget {
    const stored = { ...widget, metadata: { ...widget.metadata, resourceVersion: String(this.#version++) } };
    this.objects.set(`${widget.metadata.namespace}/${widget.metadata.name}`, stored);
    return stored;
  }

  async patch(target: PatchTarget, operations: readonly PatchOperation[], subresource: "status" | undefined) {
    const key = `${target.namespace}/${target.name}`;
    if (this.interferences > 0) {
      this.interferences--;
      const current = this.objects.get(key);
      if (current) this.put({ ...current, metadata: { ...current.metadata, labels: { touched: "yes" } } });
    }
    const current = this.objects.get(key);
    if (current?.metadata.resourceVersion !== target.resourceVersion) {
      throw new ConflictError(`${key} changed since resourceVersion ${target.resourceVersion}`);
    }
    this.patches.push({ subresource, operations });
    return this.put(applied(current, operations));
  }

  async remove(target: RemoveTarget) {
    const key = `${target.namespace}/${target.name}`;
    if (this.objects.get(key)?.metadata.uid === target.uid) this.objects.delete(key);
  }

  record(_: unknown, event: EventRecord): void {
    this.events.push(event);
  }
}

/** A cache whose list is the writer's objects at start, and which hears every later write through `tell`. */
async function widgetCache(writer: MemoryWriter, clock: FakeClock) {
  let emit: ((type: string, object: Widget) => void) | undefined;
  const source: ListWatchSource<Widget> = {
    list: async () => ({ items: [...writer.objects.values()], metadata: { resourceVersion: "1" } }),
    watch: async (_, onEvent) => {
      emit = onEvent;
      return { abort: () => {} };
    },
  };
  const informer = new Informer<Widget>({
    kubeConfig: nowhereKubeConfig(),
    resource: RESOURCE,
    kind: "Widget",
    source: source as ListWatchSource<unknown>,
    clock,
  });
  await informer.start();
  return { informer, tell: (widget: Widget) => emit?.("MODIFIED", widget) };
}

/** A controller of the Widget kind on `writer`, over a cache that holds what the writer holds. */
async function controllerOn(writer: MemoryWriter, kind: MachineKind<Widget, undefined, never> = widgetKind) {
  const clock = new FakeClock(Date.parse("2026-11-25T10:00:00Z"));
  const cache = await widgetCache(writer, clock);
  const informers = { of: () => cache.informer } as unknown as InformerSet;
  const context = {
    kubeConfig: nowhereKubeConfig(),
    informers,
    providerName: "test",
    environment: "test",
    backend: { name: "none" },
    clock,
    log: silentLogger,
    timing: widgetKind.timing,
    state: undefined,
  } as unknown as KindContext;
  const controller = new MachineController<Widget>({ kind, context, writer });
  return { controller, cache };
}

const KEY = "ns/w1";

function newWidget(writer: MemoryWriter): Widget {
  return writer.put({
    apiVersion: "test.example/v1",
    kind: "Widget",
    metadata: { namespace: "ns", name: "w1", uid: "u1" },
  });
}

describe("MachineController", () => {
  it("writes a step's metadata and status once each, and records its Event", async () => {
    const writer = new MemoryWriter();
    newWidget(writer);
    const { controller } = await controllerOn(writer);

    await controller.reconcile(KEY);

    expect(writer.patches.map((p) => p.subresource ?? "object")).toEqual(["object", "status"]);
    expect(writer.patches[0]?.operations).toEqual([
      { op: "add", path: "/metadata/finalizers", value: [FINALIZER] },
    ]);
    expect(writer.patches[1]?.operations).toEqual([
      { op: "add", path: "/status", value: { phase: "Ready" } },
    ]);
    expect(writer.objects.get(KEY)?.status?.phase).toBe("Ready");
    expect(controller.writes).toBe(2);
    expect(writer.events.map((e) => e.reason)).toEqual(["Ready"]);
  });

  it("writes nothing and records nothing at rest, even before the cache has seen its own writes", async () => {
    const writer = new MemoryWriter();
    newWidget(writer);
    const { controller } = await controllerOn(writer);
    await controller.reconcile(KEY);
    const patches = writer.patches.length;

    // The cache still holds the unwritten widget: the controller starts from its own last write.
    await controller.reconcile(KEY);
    await controller.reconcile(KEY);

    expect(writer.patches.length).toBe(patches);
    expect(writer.events.length).toBe(1);
  });

  it("fails a reconcile whose object changed under it, as a quiet retry, and writes on the retry", async () => {
    const writer = new MemoryWriter();
    newWidget(writer);
    const { controller, cache } = await controllerOn(writer);
    writer.interferences = 1;

    const failed = await controller.reconcile(KEY).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(failed).toBeInstanceOf(ConflictError);
    expect(classifyFailure(failed)).toEqual({ kind: "retry", expected: true });
    expect(writer.patches).toEqual([]);
    expect(writer.events).toEqual([]); // nothing was written, so nothing happened to tell

    // The other write reaches the cache; the retry steps from it and writes once.
    cache.tell(writer.objects.get(KEY) as Widget);
    await controller.reconcile(KEY);

    const stored = writer.objects.get(KEY);
    expect(stored?.metadata.labels).toEqual({ touched: "yes" });
    expect(stored?.metadata.finalizers).toEqual([FINALIZER]);
    expect(stored?.status?.phase).toBe("Ready");
    expect(writer.patches.map((p) => p.subresource ?? "object")).toEqual(["object", "status"]);
  });

  it("tells a look that fails on the object as a Warning Event, once per distinct failure, and writes nothing", async () => {
    const writer = new MemoryWriter();
    newWidget(writer);
    let why: string | undefined = "the backend of ns/w1 is unknown";
    const blind: MachineKind<Widget, undefined, never> = {
      ...widgetKind,
      open: async () => ({
        observe: async () => {
          if (why) throw new Error(why);
        },
        step: (object) => stepWidget(object),
        run: async () => {},
      }),
    };
    const { controller } = await controllerOn(writer, blind);
    const attempt = () =>
      controller.reconcile(KEY).then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      );

    expect(await attempt()).toBe("the backend of ns/w1 is unknown");
    expect(await attempt()).toBe("the backend of ns/w1 is unknown"); // the same failure again: told once
    why = "Docker cannot be asked";
    expect(await attempt()).toBe("Docker cannot be asked");
    expect(writer.patches).toEqual([]);
    expect(writer.events).toEqual([
      {
        type: "Warning",
        reason: "ObserveFailed",
        message: "looking at it failed: the backend of ns/w1 is unknown",
      },
      { type: "Warning", reason: "ObserveFailed", message: "looking at it failed: Docker cannot be asked" },
    ]);
    why = undefined; // the look works again: the widget goes Ready
    await controller.reconcile(KEY);
    expect(writer.objects.get(KEY)?.status?.phase).toBe("Ready");
  });

  it("tells only what ran: every round's commands run before its Events are told, the last round's too", async () => {
    const writer = new MemoryWriter();
    newWidget(writer);
    let pokes = 0;
    // A widget whose every look orders one more poke (it never settles): a transition Event each look, and an
    // Event that tells the poke it orders, as a rollout tells the Clusters it asks.
    const restless: MachineKind<Widget, number, string> = {
      ...(widgetKind as unknown as MachineKind<Widget, number, string>),
      open: async () => ({
        observe: async () => pokes,
        step: (widget, seen) => ({
          ...stepWidget(widget),
          state: "poking",
          desired: {
            metadata: { ...widget.metadata, finalizers: [FINALIZER] },
            status: { phase: `Poked${seen}` },
          },
          commands: [`poke ${seen + 1}`],
          events: [
            { type: "Normal", reason: "Poking", message: `poking after ${seen}` },
            { type: "Normal", reason: "Poked", message: `poke ${seen + 1}` },
          ],
          transitions: 1,
        }),
        run: async () => {
          pokes++;
        },
      }),
    };
    const { controller } = await controllerOn(
      writer,
      restless as unknown as MachineKind<Widget, undefined, never>,
    );

    await controller.reconcile(KEY);

    // Three rounds, each poke told once and run; of the transitions, only the last.
    expect(pokes).toBe(3);
    expect(writer.events.map((event) => event.message)).toEqual([
      "poke 1",
      "poke 2",
      "poking after 2",
      "poke 3",
    ]);
    // The status is the last round's, whose poke ran.
    expect(writer.objects.get(KEY)?.status?.phase).toBe("Poked2");
  });
});
