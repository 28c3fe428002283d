/**
 * The ClusterSnapshot statechart: pending → taking → complete ⇄ restoring, failed. Pure: no I/O, no clock; what
 * the backend did comes in as facts.
 */
import { setup } from "xstate";
import type { SnapshotManifest } from "../../api/control-plane-snapshot.ts";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";

/** The snapshot's Cluster, as the engine's cache shows it. */
export type SnapshotClusterFact =
  | { readonly found: false }
  | {
      readonly found: true;
      readonly uid: string;
      readonly ready: boolean;
      /** Why it cannot be snapshotted by its backend (e.g. `existing`); absent: it can. */
      readonly unsupported?: string;
    };

/** How a restore this engine carried out ended (kept until the status records it). */
export interface RestoreOutcome {
  readonly request: string;
  /** `Restored`, or the rejection's reason. */
  readonly outcome: string;
  readonly message: string;
}

/** What one look at a snapshot knows, level-based. */
export interface SnapshotFacts {
  readonly cluster: SnapshotClusterFact;
  /** The manifest of the snapshot this engine just took (until the status records it). */
  readonly taken?: SnapshotManifest;
  /** Whether the status records the snapshot as taken. */
  readonly recorded: boolean;
  /** The restore annotation's value, when it asks for a rollback not answered yet. */
  readonly restoreRequested?: string;
  /** The outcome of the asked rollback, once this engine carried it out. */
  readonly restored?: RestoreOutcome;
}

/** The one event: "here is what the world looks like now". */
export type SnapshotEvent = ObservedEvent<SnapshotFacts>;

const when = whenObserved<SnapshotFacts>;

/** Events the step fills in with what only it knows (the size, the refusal). */
const TAKEN_EVENT: EventRecord = { type: "Normal", reason: "Taken", message: "" };
const RESTORE_EVENT: EventRecord = { type: "Normal", reason: "Restored", message: "" };
const FAILED_EVENT: EventRecord = { type: "Warning", reason: "Failed", message: "" };

const isTakenFacts = (facts: SnapshotFacts) => facts.recorded || facts.taken !== undefined;
const isRestoreAnswered = (facts: SnapshotFacts) =>
  facts.restoreRequested !== undefined && facts.restored?.request === facts.restoreRequested;

/** To `failed`, with its Warning, when `guard` holds (no Cluster, or a backend that takes no snapshots). */
const failsWhen = (guard: "isClusterMissing" | "isUnsupported") =>
  ({ guard, target: "failed", actions: [recordEvent(FAILED_EVENT)] }) as const;

/** The machine: named guards and actions, then the chart. */
export const clusterSnapshotMachine = setup({
  types: observedMachineTypes<SnapshotFacts>(),
  guards: {
    isTaken: when(isTakenFacts),
    isNotTaken: when((facts) => !isTakenFacts(facts)),
    isClusterMissing: when((facts) => !facts.cluster.found && !isTakenFacts(facts)),
    isUnsupported: when((facts) => facts.cluster.found && facts.cluster.unsupported !== undefined),
    isClusterReady: when((facts) => facts.cluster.found && facts.cluster.ready),
    isRestoreRequested: when((facts) => facts.restoreRequested !== undefined && !isRestoreAnswered(facts)),
    isRestoreAnswered: when(isRestoreAnswered),
    isRestoreWithdrawn: when((facts) => facts.restoreRequested === undefined),
  },
  actions: actionsAsData("takeSnapshot", "restoreSnapshot"),
}).createMachine({
  id: "clusterSnapshot",
  context: {},
  initial: "pending",
  states: {
    pending: {
      description:
        "Waits for its Cluster to be Ready; fails at once when there is no such Cluster or its backend cannot snapshot.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Pending`],
      always: [
        failsWhen("isClusterMissing"),
        failsWhen("isUnsupported"),
        { guard: "isClusterReady", target: "taking" },
      ],
    },
    taking: {
      description:
        "The backend writes the snapshot (etcd's consistent snapshot, the CA and service-account keys) whole into its storage; a failure is retried.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Taking`],
      entry: ["takeSnapshot"],
      on: { observed: { guard: "isNotTaken", target: "taking", reenter: true } },
      always: [
        { guard: "isTaken", target: "complete", actions: [recordEvent(TAKEN_EVENT)] },
        failsWhen("isClusterMissing"),
      ],
    },
    complete: {
      description:
        "Taken and checksummed; the restore annotation with a new value rolls the Cluster back to it.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Complete`],
      always: [{ guard: "isRestoreRequested", target: "restoring" }],
    },
    restoring: {
      description:
        "The backend checks the snapshot (checksums, the Cluster's own keys) and rolls the Cluster back to it in place; a refused snapshot is answered, not retried.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Restoring`],
      entry: ["restoreSnapshot"],
      on: { observed: { guard: "isRestoreRequested", target: "restoring", reenter: true } },
      always: [
        {
          guard: "isRestoreAnswered",
          target: "complete",
          actions: [recordEvent(RESTORE_EVENT)],
        },
        { guard: "isRestoreWithdrawn", target: "complete" },
      ],
    },
    failed: {
      description:
        "Its Cluster does not exist or its backend cannot take snapshots: nothing is taken; another snapshot is another object.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Failed`],
    },
  },
});
