/** The EndpointExport's pure step, on the engine's generic step: only what is the kind's own. */
import { mergeConditions } from "../../../src/machines/shared/conditions.ts";
import { type KindStep, kindStep, type StepBasics } from "../../../src/machines/shared/kind-step.ts";
import type { RequeueTiming } from "../../../src/machines/shared/machine-tags.ts";
import { type ExportFacts, endpointExportMachine } from "./machine.ts";
import type { EndpointExport, EndpointExportStatus } from "./types.ts";

/** Our finalizer on exports. */
export const EXPORT_FINALIZER = "examples.engine.openmcp.cloud/endpoint-export";

/** What the runtime does for an export. */
export type ExportCommand =
  | { readonly kind: "writeConfigMap"; readonly endpoint: string }
  | { readonly kind: "deleteConfigMap" };

/** What one step is given: the export, the facts its kind gathered, and the basics (`now`, timing). */
export interface ExportStepInput extends StepBasics {
  readonly object: EndpointExport;
  readonly facts: ExportFacts;
  readonly timing: RequeueTiming;
}

/** One step of an export: the generic step with the kind's own parts. */
export const stepEndpointExport: (
  input: ExportStepInput,
) => KindStep<EndpointExport, EndpointExportStatus, ExportCommand, ExportFacts> = kindStep<{
  input: ExportStepInput;
  object: EndpointExport;
  facts: ExportFacts;
  command: ExportCommand;
  status: EndpointExportStatus;
  derived: undefined; // what the kind computes once per transition for several parts: nothing here
}>({
  machine: endpointExportMachine,
  object: (input) => input.object,
  // Where the state is stored: the CRD's status.state.
  readState: (object) => object.status?.state || "waiting",
  facts: (input) => input.facts,
  finalizer: EXPORT_FINALIZER,
  // What each action means; addFinalizer, removeFinalizer and recordEvent mean the same for every kind.
  actions: {
    writeConfigMap: (_, { facts }) =>
      facts.endpoint ? { kind: "writeConfigMap", endpoint: facts.endpoint } : undefined,
    deleteConfigMap: () => ({ kind: "deleteConfigMap" }),
  },
  // The status; state and phase come from the machine (its state value and `phase:` tag).
  status: ({ input: { object, facts, now }, state, phase }) => ({
    ...object.status,
    observedGeneration: object.metadata.generation ?? 0,
    ...(phase ? { phase } : {}),
    state,
    ...(facts.endpoint ? { endpoint: facts.endpoint } : {}),
    conditions: mergeConditions(
      object.status?.conditions,
      [
        state === "published"
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
      object.metadata.generation ?? 0,
      now,
    ),
  }),
});
