/** Records Kubernetes Events about objects, so `kubectl describe` tells what the engine did and why. */
import { hostname } from "node:os";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "./logger.ts";
import { apiStatusOf, errorMessage } from "./logger.ts";

/** The object an Event is about. */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

/** One Event. Messages never contain secrets. */
export interface EventRecord {
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** Events queued by {@link EventRecorder.send} at most; beyond, new ones are dropped (and counted). */
const MAX_PENDING = 10_000;
/** Events sent at once by the background sender. */
const SENDERS = 4;

/**
 * Writes Events; failures are logged, never thrown: an Event is worth less than the reconcile around it.
 * `send` hands one to a background sender and returns at once, as client-go's event broadcaster does, so
 * no reconcile waits a round trip for its Events; `flush` waits until those handed over are written.
 */
export class EventRecorder {
  readonly #api: CoreV1Api;
  readonly #log: Logger;
  readonly #component: string;
  readonly #instance = hostname();
  readonly #pending: Array<() => Promise<void>> = [];
  #sending = 0;
  readonly #idle: Array<() => void> = [];
  /** How many Events were written (for benchmarks and tests). */
  written = 0;
  /** How many were dropped because {@link MAX_PENDING} were already waiting. */
  dropped = 0;

  constructor(kubeConfig: KubeConfig, log: Logger, component = "openmcp-engine") {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.#log = log;
    this.#component = component;
  }

  /** Queues the Event for the background sender; never waits, never throws. */
  send(subject: EventSubject, event: EventRecord, now: Date): void {
    if (this.#pending.length >= MAX_PENDING) {
      if (this.dropped++ === 0) {
        this.#log.warn("Events are written slower than they come; dropping new ones", {
          reason: event.reason,
        });
      }
      return;
    }
    this.#pending.push(() => this.record(subject, event, now));
    this.#pump();
  }

  /** Resolves once every Event handed to {@link send} so far has been written (or has failed). */
  flush(): Promise<void> {
    if (this.#sending === 0 && this.#pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (this.#sending < SENDERS && this.#pending.length > 0) {
      const write = this.#pending.shift() as () => Promise<void>;
      this.#sending++;
      void write().finally(() => {
        this.#sending--;
        this.#pump();
        if (this.#sending === 0 && this.#pending.length === 0) {
          for (const resolve of this.#idle.splice(0)) resolve();
        }
      });
    }
  }

  /** Writes the Event now; resolves when it is written (or failed, which is logged). */
  async record(subject: EventSubject, event: EventRecord, now: Date): Promise<void> {
    const namespace = subject.metadata.namespace ?? "default";
    try {
      await this.#api.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${subject.metadata.name}.`, namespace },
          involvedObject: {
            apiVersion: subject.apiVersion,
            kind: subject.kind,
            name: subject.metadata.name,
            namespace: subject.metadata.namespace,
            uid: subject.metadata.uid,
          },
          type: event.type,
          reason: event.reason,
          message: event.message,
          source: { component: this.#component },
          reportingComponent: this.#component,
          reportingInstance: this.#instance,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
      this.written++;
    } catch (error) {
      const status = apiStatusOf(error);
      this.#log.warn("could not record Event", {
        reason: event.reason,
        error: errorMessage(error),
        ...(status ? { status } : {}),
      });
    }
  }
}

/**
 * What one reconcile tells in Events, from its steps' in order: every warning; of the machine's transitions only
 * the last Normal one (states passed through within one reconcile were never visible in the status either); every
 * other Event a step had (what it ordered or found, see `MachineStep.transitions`).
 */
export function eventsWorthRecording(
  steps: readonly { readonly events: readonly EventRecord[]; readonly transitions?: number }[],
): EventRecord[] {
  const told = steps.flatMap((step) =>
    step.events.map((event, index) => ({
      event,
      transition: index < (step.transitions ?? step.events.length),
    })),
  );
  const lastNormal = told.findLastIndex(({ event, transition }) => transition && event.type === "Normal");
  return told
    .filter(({ event, transition }, index) => event.type === "Warning" || !transition || index === lastNormal)
    .map(({ event }) => event);
}
