/** What the live view shows: every interpreted resource with its state, conditions and recent transitions, kept current. */
import type { AnyStateMachine } from "xstate";
import type { Condition } from "../api/common.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../api/constants/cluster-pool.ts";
import { referenceKey } from "../api/object-key.ts";
import { parsePoolMemberAnnotation } from "../machines/cluster-pool/claim.ts";
import { Tombstones } from "../runtime/controllers/tombstones.ts";
import type { InformerEvent } from "../runtime/informer.ts";
import type { InterpretedStep, MachineObserver } from "../runtime/machine-observer.ts";

/** One change of state of one resource, as the runtime committed it. */
export interface LiveTransition {
  /** When (ms since epoch, the runtime's clock). */
  readonly at: number;
  readonly from: string;
  readonly to: string;
  /** The type of the event that caused it (`observed`). */
  readonly event: string;
  /** The event's data as JSON (the facts the machine saw), for a person who wants to know why. */
  readonly facts: string;
}

/** A resource as the page shows it; plain JSON, sent to browsers as is. */
export interface LiveResource {
  readonly uid: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** Id of the machine that interprets it: which diagram to draw. */
  readonly machine: string;
  /** The machine state (`deleting.releasing`). */
  readonly state: string;
  readonly phase: string | undefined;
  readonly conditions: readonly Condition[];
  /** Oldest first, at most {@link LiveViewOptions.maxTransitions}. */
  readonly transitions: readonly LiveTransition[];
  /** Sharded mode: the replica that owns it and works on it (this process; each replica shows its own share). */
  readonly replica?: string;
  /** A Cluster bound to a warm pool's cluster: the pool and the pooled cluster. */
  readonly fromPool?: { readonly pool: string; readonly member: string };
}

/** A change the page must draw. */
export type LiveViewChange =
  | { readonly type: "resource"; readonly resource: LiveResource }
  | { readonly type: "removed"; readonly uid: string };

/** The parts of an object the view reads: identity, phase, conditions, persisted machine state. */
export interface ViewedObject {
  readonly metadata?: {
    readonly uid?: string;
    readonly name?: string;
    readonly namespace?: string;
    readonly annotations?: { readonly [key: string]: string };
  };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly Condition[];
    readonly providerStatus?: { readonly [key: string]: unknown };
  };
}

/** The part of an informer the view needs (the shared caches of the engine fit). */
export interface ViewSource<T extends ViewedObject> {
  on(handler: (event: InformerEvent<T>) => void): void;
  get(key: string): T | undefined;
}

/** Options of {@link LiveViewModel}. */
export interface LiveViewOptions {
  /** Transitions kept per resource. Default 20. */
  readonly maxTransitions?: number;
}

/** What the view keeps per resource: the shown resource plus where its object lives. */
interface Tracked {
  resource: LiveResource;
  readonly source: ViewSource<ViewedObject> | undefined;
  /** The last version sent to listeners, to send nothing when nothing changed. */
  sent: string;
}

/**
 * A {@link MachineObserver} that keeps, per resource the runtime interprets, what a person wants to see:
 * the state (from each committed step, then from the object as stored), the conditions and phase (from the
 * cache), and the last transitions (kept in memory, since this process started). Resources appear at their
 * first step and go when the runtime or the cache reports them deleted (steps reported later are dropped).
 *
 * Guarantees: listeners hear of a resource only when what they would show changed; nothing here throws into
 * the runtime (a failing listener is dropped).
 */
export class LiveViewModel implements MachineObserver {
  readonly #max: number;
  readonly #tracked = new Map<string, Tracked>();
  readonly #sources = new Map<string, ViewSource<ViewedObject>>();
  readonly #machines = new Map<string, AnyStateMachine>();
  readonly #listeners = new Set<(change: LiveViewChange) => void>();
  readonly #removed = new Tombstones();
  /** Sharded mode: this replica's identity, shown on every resource it steps. */
  #replica: string | undefined;

  constructor(options: LiveViewOptions = {}) {
    this.#max = options.maxTransitions ?? 20;
  }

  /** Sharded mode: names this replica as the owner of every resource it shows. */
  setReplica(identity: string): void {
    this.#replica = identity;
  }

  /** Follows the objects of `kind` in `source`: conditions, phase and stored state of resources already shown. */
  watch<T extends ViewedObject>(kind: string, source: ViewSource<T>): void {
    const general = source as unknown as ViewSource<ViewedObject>;
    this.#sources.set(kind, general);
    general.on((event) => {
      const uid = event.object.metadata?.uid ?? "";
      if (event.type === "delete") {
        this.removed(kind, uid);
        return;
      }
      const tracked = this.#tracked.get(uid);
      if (!tracked) return;
      tracked.resource = withObject(tracked.resource, event.object, true);
      this.#publish(tracked);
    });
  }

  stepped(step: InterpretedStep): void {
    if (this.#removed.has(step.uid)) return; // a late step of a resource already gone
    this.#machines.set(step.machine.id, step.machine);
    let tracked = this.#tracked.get(step.uid);
    if (!tracked) {
      const source = this.#sources.get(step.kind);
      tracked = {
        resource: {
          uid: step.uid,
          kind: step.kind,
          namespace: step.namespace,
          name: step.name,
          machine: step.machine.id,
          state: step.before,
          phase: undefined,
          conditions: [],
          transitions: [],
          ...(this.#replica ? { replica: this.#replica } : {}),
        },
        source,
        sent: "",
      };
      this.#tracked.set(step.uid, tracked);
    }
    let resource: LiveResource = { ...tracked.resource, state: step.after };
    if (step.before !== step.after) {
      const { type, ...data } = step.event;
      const transition = { at: step.at, from: step.before, to: step.after, event: type, facts: json(data) };
      resource = { ...resource, transitions: [...resource.transitions, transition].slice(-this.#max) };
    }
    // The cached object may predate this step's write; the state is the step's until the cache catches up.
    const object = tracked.source?.get(referenceKey(step));
    tracked.resource = object ? withObject(resource, object, false) : resource;
    this.#publish(tracked);
  }

  removed(_kind: string, uid: string): void {
    this.#removed.add(uid);
    if (!this.#tracked.delete(uid)) return;
    this.#emit({ type: "removed", uid });
  }

  /** Every resource shown, by kind, namespace and name. */
  resources(): LiveResource[] {
    return [...this.#tracked.values()]
      .map((tracked) => tracked.resource)
      .sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  }

  /** The machines seen so far, by id (for their diagrams). */
  machines(): ReadonlyMap<string, AnyStateMachine> {
    return this.#machines;
  }

  /** Calls `listener` with every change from now on; returns the way to stop. */
  subscribe(listener: (change: LiveViewChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #publish(tracked: Tracked): void {
    const text = JSON.stringify(tracked.resource);
    if (text === tracked.sent) return;
    tracked.sent = text;
    this.#emit({ type: "resource", resource: tracked.resource });
  }

  #emit(change: LiveViewChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        this.#listeners.delete(listener);
      }
    }
  }
}

/** The resource with the phase and conditions of its stored object, and its stored state if `stateToo`. */
function withObject(resource: LiveResource, object: ViewedObject, stateToo: boolean): LiveResource {
  const status = object.status;
  const stored = status?.providerStatus?.state;
  const fromPool = object.metadata?.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember];
  return {
    ...resource,
    phase: status?.phase,
    conditions: status?.conditions ?? [],
    ...(stateToo && typeof stored === "string" && stored !== "" ? { state: stored } : {}),
    ...(fromPool ? { fromPool: parsePoolMemberAnnotation(fromPool) } : {}),
  };
}

function sortKey(resource: LiveResource): string {
  return `${resource.kind}\u0000${resource.namespace}\u0000${resource.name}`;
}

/** Compact JSON, cut at 2,000 characters: enough to see the facts, never a flood. */
function json(value: unknown): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}
