/** The live view's model: resources from committed steps, conditions from the cache, transitions, removal. */
import { describe, expect, it } from "vitest";
import { clusterMachine } from "../../../src/machines/cluster/machine.ts";
import type { InformerEvent } from "../../../src/runtime/informer.ts";
import type { InterpretedStep } from "../../../src/runtime/machine-observer.ts";
import {
  type LiveViewChange,
  LiveViewModel,
  type ViewedObject,
  type ViewSource,
} from "../../../src/views/live-view-model.ts";

/** A cache stand-in: objects by key, and a way to emit informer events. */
class FakeSource implements ViewSource<ViewedObject> {
  readonly objects = new Map<string, ViewedObject>();
  readonly #handlers: Array<(event: InformerEvent<ViewedObject>) => void> = [];
  on(handler: (event: InformerEvent<ViewedObject>) => void): void {
    this.#handlers.push(handler);
  }
  get(key: string): ViewedObject | undefined {
    return this.objects.get(key);
  }
  emit(type: "upsert" | "delete", object: ViewedObject): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    if (type === "upsert") this.objects.set(key, object);
    else this.objects.delete(key);
    for (const handler of this.#handlers) handler({ type, key, object });
  }
}

const object = (state: string, ready: "True" | "False", phase = "Progressing"): ViewedObject => ({
  metadata: { uid: "u1", namespace: "demo", name: "one" },
  status: {
    phase,
    providerStatus: { state },
    conditions: [
      {
        type: "ClusterReady",
        status: ready,
        reason: "R",
        message: "m",
        lastTransitionTime: "2026-11-21T10:00:00Z",
      },
    ],
  },
});

function step(before: string, after: string, at = 1_000): InterpretedStep {
  return {
    kind: "Cluster",
    uid: "u1",
    namespace: "demo",
    name: "one",
    machine: clusterMachine,
    event: { type: "observed" },
    before,
    after,
    at,
  };
}

function setUp(maxTransitions?: number) {
  const source = new FakeSource();
  const model = new LiveViewModel(maxTransitions === undefined ? {} : { maxTransitions });
  model.watch("Cluster", source);
  const changes: LiveViewChange[] = [];
  model.subscribe((change) => changes.push(change));
  return { source, model, changes };
}

describe("the live view model", () => {
  it("shows a resource from its first step, with the step's state and the transition it made", () => {
    const { model, changes } = setUp();
    model.stepped(step("pending", "provisioning"));
    expect(model.resources()).toEqual([
      expect.objectContaining({
        uid: "u1",
        kind: "Cluster",
        machine: "cluster",
        state: "provisioning",
        transitions: [{ at: 1_000, from: "pending", to: "provisioning", event: "observed", facts: "{}" }],
      }),
    ]);
    expect(model.machines().get("cluster")).toBe(clusterMachine);
    expect(changes).toHaveLength(1);
  });

  it("names the replica that owns a resource in sharded mode, and none otherwise", () => {
    const plain = setUp();
    plain.model.stepped(step("pending", "provisioning"));
    expect(plain.model.resources()[0]?.replica).toBeUndefined();
    const sharded = setUp();
    sharded.model.setReplica("engine-0_1a2b3c4d");
    sharded.model.stepped(step("pending", "provisioning"));
    expect(sharded.model.resources()[0]?.replica).toBe("engine-0_1a2b3c4d");
  });

  it("says which warm pool a Cluster came from, once its object says so, and nothing for others", () => {
    const { source, model } = setUp();
    model.stepped(step("pending", "provisioning"));
    expect(model.resources()[0]?.fromPool).toBeUndefined();
    const bound = object("ready", "True", "Ready");
    source.emit("upsert", {
      ...bound,
      metadata: { ...bound.metadata, annotations: { "engine.openmcp.cloud/pool-member": "small/pool-7f3a" } },
    });
    expect(model.resources()[0]?.fromPool).toEqual({ pool: "small", member: "pool-7f3a" });
  });

  it("takes conditions and phase from the cache and tells listeners only about real changes", () => {
    const { source, model, changes } = setUp();
    source.emit("upsert", object("pending", "False")); // not shown yet: no step
    expect(changes).toEqual([]);
    model.stepped(step("pending", "provisioning"));
    expect(model.resources()[0]?.conditions[0]?.status).toBe("False");
    expect(model.resources()[0]?.state).toBe("provisioning"); // the step's, not the stale cache's

    source.emit("upsert", object("ready", "True", "Ready"));
    expect(model.resources()[0]).toMatchObject({ state: "ready", phase: "Ready" });
    const count = changes.length;
    model.stepped(step("ready", "ready")); // a resync: nothing new
    source.emit("upsert", object("ready", "True", "Ready"));
    expect(changes).toHaveLength(count);
  });

  it("keeps the latest transitions only", () => {
    const { model } = setUp(2);
    model.stepped(step("pending", "provisioning", 1));
    model.stepped(step("provisioning", "ready", 2));
    model.stepped(step("ready", "updating", 3));
    expect(model.resources()[0]?.transitions.map((t) => t.at)).toEqual([2, 3]);
  });

  it("drops a resource the cache reports deleted, and ignores a late step of it", () => {
    const { source, model, changes } = setUp();
    model.stepped(step("deleting.blocked", "deleting.releasing"));
    source.emit("delete", object("deleting.releasing", "False"));
    expect(model.resources()).toEqual([]);
    expect(changes.at(-1)).toEqual({ type: "removed", uid: "u1" });
    model.stepped(step("deleting.releasing", "deleting.released"));
    expect(model.resources()).toEqual([]);
  });

  it("keeps going when a listener throws, without that listener", () => {
    const { model, changes } = setUp();
    model.subscribe(() => {
      throw new Error("broken page");
    });
    model.stepped(step("pending", "provisioning"));
    model.stepped(step("provisioning", "ready"));
    expect(changes).toHaveLength(2);
  });
});
