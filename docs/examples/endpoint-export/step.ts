/** The EndpointExport's pure step: (export, facts, now) → next state, desired object, commands, Events. */
import { mergeConditions } from "../../../src/machines/shared/conditions.ts";
import { type FinalizerWish, withFinalizer } from "../../../src/machines/shared/finalizer.ts";
import type { EventRecord, MachineStep } from "../../../src/machines/shared/machine-step.ts";
import { requeueClass } from "../../../src/machines/shared/machine-tags.ts";
import { pureTransition } from "../../../src/machines/shared/pure-transition.ts";
import { snapshotRestorer } from "../../../src/machines/shared/snapshots.ts";
import { stateValueToString } from "../../../src/machines/shared/state-value.ts";
import { type ExportFacts, endpointExportMachine } from "./machine.ts";
import type { EndpointExport, EndpointExportStatus } from "./types.ts";

/** Our finalizer on exports. */
export const EXPORT_FINALIZER = "examples.engine.openmcp.cloud/endpoint-export";

/** What the runtime does for an export. */
export type ExportCommand =
  | { readonly kind: "writeConfigMap"; readonly endpoint: string }
  | { readonly kind: "deleteConfigMap" };

const transition = pureTransition(endpointExportMachine);
const restore = snapshotRestorer(endpointExportMachine);

/** One step; `now` is RFC 3339, used only for condition times. */
export function stepEndpointExport(
  object: EndpointExport,
  facts: ExportFacts,
  now: string,
  timing: { readonly pollMs: number; readonly resyncMs: number },
): MachineStep<EndpointExport["metadata"], EndpointExportStatus, ExportCommand> {
  const previousState = object.status?.state || "waiting";
  const event = { type: "observed" as const, facts };
  const [snapshot, actions] = transition(restore(previousState), event);
  const state = stateValueToString(snapshot.value);

  let finalizer: FinalizerWish;
  const commands: ExportCommand[] = [];
  const events: EventRecord[] = [];
  for (const action of actions) {
    if (action.type === "addFinalizer") finalizer = "add";
    else if (action.type === "removeFinalizer") finalizer = "remove";
    else if (action.type === "writeConfigMap" && facts.endpoint)
      commands.push({ kind: "writeConfigMap", endpoint: facts.endpoint });
    else if (action.type === "deleteConfigMap") commands.push({ kind: "deleteConfigMap" });
    else if (action.type === "recordEvent") events.push(action.params as EventRecord);
  }

  const generation = object.metadata.generation ?? 0;
  const published = state === "published";
  const conditions = mergeConditions(
    object.status?.conditions,
    [
      published
        ? {
            type: "Published",
            status: "True",
            reason: "Published",
            message: `ConfigMap holds ${facts.endpoint}`,
          }
        : {
            type: "Published",
            status: "False",
            reason: facts.endpoint ? "Publishing" : "ClusterNotReady",
            message: facts.endpoint
              ? "writing the ConfigMap"
              : `Cluster ${object.spec.clusterRef.name} is not Ready with an endpoint yet`,
          },
    ],
    generation,
    now,
  );
  const finalizers = withFinalizer(object.metadata.finalizers, EXPORT_FINALIZER, finalizer);
  const wanted = requeueClass(snapshot);
  return {
    previousState,
    event,
    state,
    desired: {
      metadata: { ...object.metadata, ...(finalizers ? { finalizers: [...finalizers] } : {}) },
      status: {
        ...object.status,
        observedGeneration: generation,
        phase: published ? "Ready" : state.startsWith("deleting") ? "Terminating" : "Pending",
        state,
        ...(facts.endpoint ? { endpoint: facts.endpoint } : {}),
        conditions,
      },
    },
    commands,
    events,
    requeueAfterMs: wanted === "poll" ? timing.pollMs : wanted === "resync" ? timing.resyncMs : undefined,
  };
}
