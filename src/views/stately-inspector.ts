/** Streams every interpreted resource to the Stately inspector: one actor per resource, its events and its snapshots. */
import { createWebSocketInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import type { ActorRefLike, AnyStateMachine, StateValue } from "xstate";
import { parseStateValue } from "../machines/shared/state-value.ts";
import { Tombstones } from "../runtime/controllers/tombstones.ts";
import { errorMessage, type Logger, silentLogger } from "../runtime/logger.ts";
import type { InterpretedStep, MachineObserver } from "../runtime/machine-observer.ts";

/** Where to send. */
export interface StatelyInspectorOptions {
  /** The relay's WebSocket URL (see `startInspectorServer`), e.g. `ws://127.0.0.1:8082`. */
  readonly url: string;
  readonly log?: Logger;
  /** Messages held while the relay is not reachable (oldest dropped first). Default 1,000. */
  readonly maxDeferred?: number;
}

/** The inspector's name of a resource: `Cluster/<namespace>/<name>`, or `<Kind>/<name>` without a namespace. */
export function inspectedName(kind: string, namespace: string, name: string): string {
  return namespace === "" ? `${kind}/${name}` : `${kind}/${namespace}/${name}`;
}

/** What the observer remembers of a resource between steps. */
interface InspectedActor {
  readonly name: string;
  value: StateValue;
}

/**
 * A {@link MachineObserver} that reports to the Stately inspector through `@statelyai/inspect`'s
 * WebSocket inspector. The engine computes transitions purely and runs no actors, so this reports them
 * as the library's manual API allows: the first step of a resource registers an actor (session id = the
 * resource's UID, name `<Kind>/<namespace>/<name>`, the machine's definition, its state before the
 * step); every step then sends the event fed to the machine and the snapshot after it; a resource that
 * went away gets a final `stopped` snapshot.
 *
 * Caveats: `inspector.actor()` takes the definition from `actorRef.logic.config` (given a string id it
 * sends none, and `info.definition` is ignored), and names the actor after the machine's id; so the
 * actor is passed as a minimal ref carrying the machine as its logic, and the name is set when the
 * registration is serialized. Events carry the facts the runtime observed, which never hold secrets. The
 * reconcile that removes the last finalizer may report its steps after the watch reported the object
 * gone; such late steps are dropped, so a stopped actor never comes back.
 * For development: every step of every resource crosses the WebSocket.
 */
export class StatelyInspector implements MachineObserver {
  readonly #inspector: ReturnType<typeof createWebSocketInspector>;
  readonly #log: Logger;
  readonly #actors = new Map<string, InspectedActor>();
  readonly #removed = new Tombstones();

  constructor(options: StatelyInspectorOptions) {
    this.#log = options.log ?? silentLogger;
    this.#inspector = createWebSocketInspector({
      url: options.url,
      maxDeferredEvents: options.maxDeferred ?? 1_000,
      // The definition is nested deeper than the library's default of 10 levels allows for some machines.
      serializationDepthLimit: 64,
      serialize: (event) => this.#named(event),
    });
  }

  stepped(step: InterpretedStep): void {
    if (this.#removed.has(step.uid)) return; // a late step of a resource already reported gone
    try {
      const actor = this.#actors.get(step.uid) ?? this.#register(step);
      this.#inspector.event(step.uid, { ...step.event });
      actor.value = parseStateValue(step.after);
      this.#inspector.snapshot(
        step.uid,
        { status: "active", value: actor.value, context: {} },
        { event: { ...step.event } },
      );
    } catch (error) {
      this.#log.debug("could not inspect a step", { uid: step.uid, error: errorMessage(error) });
    }
  }

  removed(_kind: string, uid: string): void {
    this.#removed.add(uid);
    const actor = this.#actors.get(uid);
    if (!actor) return;
    this.#actors.delete(uid);
    try {
      this.#inspector.snapshot(
        uid,
        { status: "stopped", value: actor.value, context: {} },
        { event: { type: "xstate.stop" } },
      );
    } catch (error) {
      this.#log.debug("could not inspect a removal", { uid, error: errorMessage(error) });
    }
  }

  /** Closes the WebSocket. */
  close(): void {
    this.#inspector.stop();
  }

  #register(step: InterpretedStep): InspectedActor {
    const actor: InspectedActor = {
      name: inspectedName(step.kind, step.namespace, step.name),
      value: parseStateValue(step.before),
    };
    this.#actors.set(step.uid, actor);
    const snapshot = { status: "active" as const, value: actor.value, context: {} };
    this.#inspector.actor(inspectedRef(step.uid, step.machine, snapshot), snapshot);
    return actor;
  }

  /** Gives an actor registration the resource's name (the library would name it after the machine). */
  #named(event: StatelyInspectionEvent): StatelyInspectionEvent {
    if (event.type !== "@xstate.actor") return event;
    const name = this.#actors.get(event.sessionId)?.name;
    return name === undefined ? event : { ...event, name };
  }
}

/** The least actor ref from which `inspector.actor()` reads a session id and a definition. */
function inspectedRef(uid: string, machine: AnyStateMachine, snapshot: unknown): ActorRefLike {
  const ref: ActorRefLike & { readonly logic: AnyStateMachine } = {
    sessionId: uid,
    logic: machine,
    send: () => {},
    getSnapshot: () => snapshot,
  };
  return ref;
}
