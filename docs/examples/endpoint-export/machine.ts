/** The EndpointExport statechart: Waiting → Publishing → Published, Deleting. Pure: no I/O, no clock. */
import { setup } from "xstate";
import type { EventRecord } from "../../../src/machines/shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../../../src/machines/shared/machine-tags.ts";
import { type ObservedEvent, whenObserved } from "../../../src/machines/shared/observed-guard.ts";

/** What one look at an export knows, level-based. */
export interface ExportFacts {
  readonly deleting: boolean;
  readonly hasFinalizer: boolean;
  /** The endpoint of the named Cluster, once it is Ready; undefined before. */
  readonly endpoint: string | undefined;
  /** The ConfigMap exists (whatever it holds). */
  readonly configMapExists: boolean;
  /** The ConfigMap holds exactly `endpoint`. */
  readonly published: boolean;
}

/** The one event: "here is what the world looks like now". */
export type ExportEvent = ObservedEvent<ExportFacts>;

/** The `status.phase` a state shows. */
const PENDING = `${PHASE_TAG}Pending`;

const when = whenObserved<ExportFacts>;

/** The machine: named guards and actions, then the chart. */
export const endpointExportMachine = setup({
  types: { context: {} as Record<string, never>, events: {} as ExportEvent },
  guards: {
    isBeingDeleted: when((facts) => facts.deleting),
    clusterReady: when((facts) => facts.endpoint !== undefined),
    isPublished: when((facts) => facts.published),
    isStale: when((facts) => facts.endpoint !== undefined && !facts.published),
    withoutOurFinalizer: when((facts) => !facts.hasFinalizer),
    configMapGone: when((facts) => !facts.configMapExists),
  },
  actions: {
    // Never executed here: transition() returns them as data for the step to translate.
    addFinalizer: () => {},
    removeFinalizer: () => {},
    writeConfigMap: () => {},
    deleteConfigMap: () => {},
    recordEvent: (_, _params: EventRecord) => {},
  },
}).createMachine({
  id: "endpointExport",
  context: {},
  initial: "waiting",
  states: {
    waiting: {
      description: "Waiting for the Cluster to be Ready with an endpoint (a change of the Cluster wakes it).",
      tags: [PENDING],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "clusterReady", target: "publishing" },
      ],
    },
    publishing: {
      description: "Finalizer set; the ConfigMap is written with the endpoint.",
      tags: [REQUEUE.poll, PENDING],
      entry: ["addFinalizer", "writeConfigMap"],
      on: { observed: { guard: "isStale", target: "publishing", reenter: true } },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "isPublished", target: "published" },
      ],
    },
    published: {
      description: "The ConfigMap holds the Cluster's endpoint.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Ready`],
      entry: [
        {
          type: "recordEvent",
          params: { type: "Normal", reason: "Published", message: "Endpoint published" },
        },
      ],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "isStale", target: "publishing" },
      ],
    },
    deleting: {
      description: "The export is deleted: its ConfigMap goes, then our finalizer.",
      tags: [`${PHASE_TAG}Terminating`],
      initial: "removing",
      states: {
        removing: {
          description: "Deleting the ConfigMap.",
          tags: [REQUEUE.poll],
          entry: ["deleteConfigMap"],
          always: [{ guard: "withoutOurFinalizer", target: "released" }],
          on: {
            observed: [
              { guard: "configMapGone", target: "released" },
              { target: "removing", reenter: true },
            ],
          },
        },
        released: {
          description: "Nothing is left; our finalizer goes.",
          type: "final",
          entry: ["removeFinalizer"],
        },
      },
    },
  },
});
