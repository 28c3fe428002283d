/**
 * The ClusterSnapshot statechart: pending → taking → complete ⇄ restoring, failed; from each, deleting (held while a
 * Cluster is made from it → removing its data → released). Pure: no I/O, no clock; what the backend and the store
 * did comes in as facts.
 */
import { setup } from "xstate";
import type { SnapshotManifest } from "../../api/control-plane-snapshot.ts";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import { type DeletionFacts, deletionGuards } from "../shared/finalizer.ts";
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

/** What one look at a snapshot knows, level-based (while our finalizer is on it, its data may be in the store). */
export interface SnapshotFacts extends DeletionFacts {
  readonly cluster: SnapshotClusterFact;
  /** The manifest of the snapshot this engine just took (until the status records it). */
  readonly taken?: SnapshotManifest;
  /** Whether the status records the snapshot as taken. */
  readonly recorded: boolean;
  /** The restore annotation's value, when it asks for a rollback not answered yet. */
  readonly restoreRequested?: string;
  /** The outcome of the asked rollback, once this engine carried it out. */
  readonly restored?: RestoreOutcome;
  /** This engine removed the snapshot's data from its store (after the deletion was asked). */
  readonly removed: boolean;
  /** Clusters being made from it now (restore-from, not made yet): its data is kept for them. */
  readonly usedBy: readonly string[];
}

/** The one event: "here is what the world looks like now". */
export type SnapshotEvent = ObservedEvent<SnapshotFacts>;

const when = whenObserved<SnapshotFacts>;

/** Events the step fills in with what only it knows (the size, the refusal). */
const TAKEN_EVENT: EventRecord = { type: "Normal", reason: "Taken", message: "" };
const RESTORE_EVENT: EventRecord = { type: "Normal", reason: "Restored", message: "" };
const FAILED_EVENT: EventRecord = { type: "Warning", reason: "Failed", message: "" };
const HELD_EVENT: EventRecord = { type: "Normal", reason: "DeletionHeld", message: "" };
const REMOVED_EVENT: EventRecord = { type: "Normal", reason: "Removed", message: "" };

const isTakenFacts = (facts: SnapshotFacts) => facts.recorded || facts.taken !== undefined;
const isRestoreAnswered = (facts: SnapshotFacts) =>
  facts.restoreRequested !== undefined && facts.restored?.request === facts.restoreRequested;

/** To `failed`, with its Warning, when `guard` holds (no Cluster, or a backend that takes no snapshots). */
const failsWhen = (guard: "isClusterMissing" | "isUnsupported") =>
  ({ guard, target: "failed", actions: [recordEvent(FAILED_EVENT)] }) as const;

/** Deletion first, from every state but deleting: held while a Cluster is made from it, else its data goes. */
const DELETED = [
  { guard: "isDeletedInUse", target: "deleting.held" },
  { guard: "isBeingDeleted", target: "deleting.removing" },
] as const;

/** The machine: named guards and actions, then the chart. */
export const clusterSnapshotMachine = setup({
  types: observedMachineTypes<SnapshotFacts>(),
  guards: {
    ...deletionGuards<SnapshotFacts>(),
    isTaken: when(isTakenFacts),
    isNotTaken: when((facts) => !isTakenFacts(facts)),
    isClusterMissing: when((facts) => !facts.cluster.found && !isTakenFacts(facts)),
    isUnsupported: when((facts) => facts.cluster.found && facts.cluster.unsupported !== undefined),
    isClusterReady: when((facts) => facts.cluster.found && facts.cluster.ready),
    isRestoreRequested: when((facts) => facts.restoreRequested !== undefined && !isRestoreAnswered(facts)),
    isRestoreAnswered: when(isRestoreAnswered),
    isRestoreWithdrawn: when((facts) => facts.restoreRequested === undefined),
    lacksFinalizer: when((facts) => !facts.deleting && !facts.hasFinalizer),
    isDeletedInUse: when((facts) => facts.deleting && facts.hasFinalizer && facts.usedBy.length > 0),
    isInUse: when((facts) => facts.hasFinalizer && facts.usedBy.length > 0),
    isNotInUse: when((facts) => facts.usedBy.length === 0 || !facts.hasFinalizer),
    isDataLeft: when((facts) => facts.hasFinalizer && !facts.removed),
    isDataRemoved: when((facts) => facts.removed),
  },
  actions: actionsAsData("takeSnapshot", "restoreSnapshot", "removeData"),
}).createMachine({
  id: "clusterSnapshot",
  context: {},
  initial: "pending",
  // Finalizer before the first write to the store; one made before the finalizer existed gets it at its next look.
  on: { observed: { guard: "lacksFinalizer", actions: ["addFinalizer"] } },
  states: {
    pending: {
      description:
        "Waits for its Cluster to be Ready; fails at once when there is no such Cluster or its backend cannot snapshot.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Pending`],
      always: [
        ...DELETED,
        failsWhen("isClusterMissing"),
        failsWhen("isUnsupported"),
        { guard: "isClusterReady", target: "taking" },
      ],
    },
    taking: {
      description:
        "The backend writes the snapshot (etcd's consistent snapshot, the CA and service-account keys) whole into its storage; a failure is retried.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Taking`],
      entry: ["addFinalizer", "takeSnapshot"],
      // Deletion first: a deleted snapshot is not taken again on its way out.
      on: { observed: [...DELETED, { guard: "isNotTaken", target: "taking", reenter: true }] },
      always: [
        { guard: "isTaken", target: "complete", actions: [recordEvent(TAKEN_EVENT)] },
        failsWhen("isClusterMissing"),
      ],
    },
    complete: {
      description:
        "Taken and checksummed; the restore annotation with a new value rolls the Cluster back to it.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Complete`],
      always: [...DELETED, { guard: "isRestoreRequested", target: "restoring" }],
    },
    restoring: {
      description:
        "The backend checks the snapshot (checksums, the Cluster's own keys) and rolls the Cluster back to it in place; a refused snapshot is answered, not retried.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Restoring`],
      entry: ["restoreSnapshot"],
      on: { observed: [...DELETED, { guard: "isRestoreRequested", target: "restoring", reenter: true }] },
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
      always: [...DELETED],
    },
    deleting: {
      description:
        "Deletion asked: its data leaves the store before the object goes (the finalizer), never while a Cluster is made from it.",
      initial: "removing",
      states: {
        held: {
          description:
            "A Cluster is being made from it (restore-from, not made yet): its data stays until that Cluster is made or gone.",
          tags: [REQUEUE.resync, `${PHASE_TAG}Deleting`],
          entry: [recordEvent(HELD_EVENT)],
          always: [{ guard: "isNotInUse", target: "removing" }],
        },
        removing: {
          description:
            "The engine removes its data from the store, manifest first; a store that cannot be used keeps the finalizer and says why (retried).",
          tags: [REQUEUE.poll, `${PHASE_TAG}Deleting`],
          entry: ["removeData"],
          on: {
            observed: [
              { guard: "isInUse", target: "held" },
              { guard: "isDataLeft", target: "removing", reenter: true },
            ],
          },
          always: [
            // Deleted without our finalizer (a person removed it, or it was never set): nothing is ours to remove.
            { guard: "withoutOurFinalizer", target: "released" },
            { guard: "isDataRemoved", target: "released", actions: [recordEvent(REMOVED_EVENT)] },
          ],
        },
        released: {
          description: "Its data is gone from the store; our finalizer goes, and the object with it.",
          type: "final",
          entry: ["removeFinalizer"],
        },
      },
    },
  },
});
