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

/** Writes Events; failures are logged, never thrown: an Event is worth less than the reconcile around it. */
export class EventRecorder {
  readonly #api: CoreV1Api;
  readonly #log: Logger;
  readonly #component: string;
  readonly #instance = hostname();
  /** How many Events were written (for benchmarks and tests). */
  written = 0;

  constructor(kubeConfig: KubeConfig, log: Logger, component = "openmcp-engine") {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.#log = log;
    this.#component = component;
  }

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
 * What one reconcile tells in Events: every warning, and of the normal transitions only the last one —
 * states passed through within one reconcile were never visible in the status either.
 */
export function eventsWorthRecording(events: readonly EventRecord[]): EventRecord[] {
  const lastNormal = events.findLast((event) => event.type === "Normal");
  return events.filter((event) => event.type === "Warning" || event === lastNormal);
}
