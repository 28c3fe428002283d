/** The ClusterSnapshot's pure step, on the engine's generic step: only what is the kind's own. */
import type { ClusterSnapshot, ClusterSnapshotStatus } from "../../api/cluster-snapshot.ts";
import type { Condition } from "../../api/common.ts";
import {
  CLUSTER_SNAPSHOT_REASONS,
  RESTORE_ANNOTATION,
  RESTORE_FROM_ANNOTATION,
  SNAPSHOT_CONDITIONS,
} from "../../api/constants/cluster-snapshot.ts";
import {
  describeSnapshotLocation,
  type SnapshotReference,
  type SnapshotStorageFailure,
} from "../../api/control-plane-snapshot.ts";
import { mergeConditions } from "../shared/conditions.ts";
import { deletionFacts } from "../shared/finalizer.ts";
import type { StepBasics } from "../shared/kind-step.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { namesShown } from "../shared/names-shown.ts";
import { storedStateStep } from "../shared/stored-state.ts";
import { recordedLocation, recordedReference, snapshotReference } from "./location.ts";
import {
  clusterSnapshotMachine,
  type RestoreOutcome,
  type SnapshotClusterFact,
  type SnapshotFacts,
} from "./machine.ts";

/**
 * The kind's finalizer: set before the snapshot is written, removed once its data is gone from the store (a person
 * may remove it to give the data up: the object then goes and the data stays).
 */
export const SNAPSHOT_FINALIZER = "engine.openmcp.cloud/cluster-snapshot";

/** What the runtime does for a snapshot: take it into `snapshot`, roll the Cluster back to it, or remove its data. */
export type SnapshotCommand =
  | { readonly kind: "snapshot"; readonly snapshot: SnapshotReference }
  | { readonly kind: "restore"; readonly snapshot: SnapshotReference; readonly request: string }
  | { readonly kind: "remove"; readonly snapshot: SnapshotReference };

/** What one step is given: the snapshot, its Cluster, what this engine just did, and the engine's snapshot folder. */
export interface SnapshotStepInput extends StepBasics {
  readonly object: ClusterSnapshot;
  readonly cluster: SnapshotClusterFact;
  /** The engine's snapshot folder (absolute): each snapshot goes under it. */
  readonly root: string;
  /** What this engine's snapshot command returned (kept until the status records it). */
  readonly taken?: SnapshotFacts["taken"];
  /** How this engine's restore of the asked request ended (kept until the status records it). */
  readonly restored?: RestoreOutcome;
  /** Why the storage failed the last command (with `lastError`): the reason shown instead of the generic one. */
  readonly storageFailure?: SnapshotStorageFailure;
  /** This engine removed the snapshot's data from its store (after its deletion was asked). */
  readonly removed?: boolean;
  /** Clusters of its namespace being made from it now (restore-from naming it, not made yet), sorted. */
  readonly usedBy?: readonly string[];
}

/** The facts of one look, from the input alone. */
export function snapshotFacts(input: SnapshotStepInput): SnapshotFacts {
  const { object } = input;
  const recorded = object.status?.checksum !== undefined;
  const asked = object.metadata.annotations?.[RESTORE_ANNOTATION];
  const restoreRequested =
    asked !== undefined && asked !== object.status?.lastRestore?.request ? asked : undefined;
  return {
    cluster: input.cluster,
    ...(input.taken && !recorded ? { taken: input.taken } : {}),
    recorded,
    ...(restoreRequested !== undefined ? { restoreRequested } : {}),
    ...(input.restored && input.restored.request === restoreRequested ? { restored: input.restored } : {}),
    ...deletionFacts(object.metadata, SNAPSHOT_FINALIZER),
    removed: input.removed === true,
    usedBy: input.usedBy ?? [],
  };
}

/** Where the snapshot's data is, for messages (never credentials). */
function whereStored(input: SnapshotStepInput): string {
  const reference = recordedReference(input.object, input.root);
  return `${reference.name} in ${describeSnapshotLocation(reference.location)}`;
}

/** The Removed condition: only while a deleted snapshot's data is still in its store. */
function removedCondition(
  input: SnapshotStepInput,
  state: string,
  facts: SnapshotFacts,
): Omit<Condition, "lastTransitionTime" | "observedGeneration"> | undefined {
  const type = SNAPSHOT_CONDITIONS.removed;
  if (state === "deleting.held")
    return {
      type,
      status: "False",
      reason: CLUSTER_SNAPSHOT_REASONS.InUse,
      message: `deleted, but Cluster ${namesShown(facts.usedBy)} is being made from it (${RESTORE_FROM_ANNOTATION}): its data (${whereStored(input)}) is removed once that Cluster is made or deleted`,
    };
  if (state === "deleting.removing")
    return input.lastError
      ? {
          type,
          status: "False",
          reason: input.storageFailure ?? CLUSTER_SNAPSHOT_REASONS.RemoveFailed,
          message: `its data (${whereStored(input)}) cannot be removed, so the object stays (finalizer ${SNAPSHOT_FINALIZER}); retried. ${input.lastError}`,
        }
      : {
          type,
          status: "False",
          reason: CLUSTER_SNAPSHOT_REASONS.Removing,
          message: `removing its data (${whereStored(input)}) from the store`,
        };
  return undefined;
}

/** Why a snapshot cannot be taken at all, for its Ready condition and the Failed Event. */
function failure(input: SnapshotStepInput): { reason: string; message: string } {
  const name = input.object.spec.cluster.name;
  const namespace = input.object.metadata.namespace ?? "";
  if (!input.cluster.found)
    return {
      reason: CLUSTER_SNAPSHOT_REASONS.ClusterNotFound,
      message: `Cluster ${namespace}/${name} does not exist: a snapshot is taken of an existing Cluster of its own namespace; create another ClusterSnapshot once it exists`,
    };
  return {
    reason: CLUSTER_SNAPSHOT_REASONS.SnapshotsUnsupported,
    message: `Cluster ${namespace}/${name} cannot be snapshotted: ${input.cluster.unsupported ?? "its backend takes no snapshots"}`,
  };
}

/**
 * A condition while the backend works on the snapshot: False, with its last failure while it keeps failing (the
 * storage's reason, or `failed`), else `working`.
 */
function whileWorking(
  type: string,
  input: SnapshotStepInput,
  failed: string,
  working: { readonly reason: string; readonly message: string },
): Omit<Condition, "lastTransitionTime" | "observedGeneration"> {
  return {
    type,
    status: "False",
    ...(input.lastError ? { reason: input.storageFailure ?? failed, message: input.lastError } : working),
  };
}

/** The Ready condition for the new state. */
function readyCondition(
  input: SnapshotStepInput,
  state: string,
  status: ClusterSnapshotStatus,
): Omit<Condition, "lastTransitionTime" | "observedGeneration"> {
  const name = input.object.spec.cluster.name;
  switch (state) {
    case "failed":
      return { type: SNAPSHOT_CONDITIONS.ready, status: "False", ...failure(input) };
    case "pending":
      return {
        type: SNAPSHOT_CONDITIONS.ready,
        status: "False",
        reason: CLUSTER_SNAPSHOT_REASONS.ClusterNotReady,
        message: `waiting for Cluster ${name} to be Ready`,
      };
    case "taking":
      return whileWorking(SNAPSHOT_CONDITIONS.ready, input, CLUSTER_SNAPSHOT_REASONS.SnapshotFailed, {
        reason: CLUSTER_SNAPSHOT_REASONS.Taking,
        message: `the backend is writing the snapshot of Cluster ${name}`,
      });
    default:
      return {
        type: SNAPSHOT_CONDITIONS.ready,
        status: "True",
        reason: CLUSTER_SNAPSHOT_REASONS.Taken,
        message: `${status.size ?? 0} bytes of Cluster ${name} (uid ${status.cluster?.uid ?? "?"}), ${status.checksum ?? ""}`,
      };
  }
}

/** The Restored condition: while a rollback runs, and after the last one; none before any was asked. */
function restoredCondition(
  input: SnapshotStepInput,
  state: string,
  lastRestore: ClusterSnapshotStatus["lastRestore"],
): Omit<Condition, "lastTransitionTime" | "observedGeneration"> | undefined {
  const name = input.object.spec.cluster.name;
  if (state === "restoring")
    return whileWorking(SNAPSHOT_CONDITIONS.restored, input, CLUSTER_SNAPSHOT_REASONS.RestoreFailed, {
      reason: CLUSTER_SNAPSHOT_REASONS.Restoring,
      message: `rolling Cluster ${name} back to this snapshot`,
    });
  if (!lastRestore) return undefined;
  const restored = lastRestore.outcome === CLUSTER_SNAPSHOT_REASONS.Restored;
  return {
    type: SNAPSHOT_CONDITIONS.restored,
    status: restored ? "True" : "False",
    reason: lastRestore.outcome,
    message: lastRestore.message,
  };
}

/** The Event of a transition, with what only the step knows. */
function eventOf(record: EventRecord, input: SnapshotStepInput, facts: SnapshotFacts): EventRecord {
  const name = input.object.spec.cluster.name;
  if (record.reason === "Failed") return { ...record, ...failure(input) };
  if (record.reason === "DeletionHeld")
    return {
      ...record,
      message: `deletion held: Cluster ${namesShown(facts.usedBy)} is being made from this snapshot; its data is removed once that is done`,
    };
  if (record.reason === "Removed")
    return { ...record, message: `removed its data (${whereStored(input)}) from the store` };
  if (record.reason === "Taken")
    return {
      ...record,
      message: `took a snapshot of Cluster ${name}: ${facts.taken?.size ?? 0} bytes, ${facts.taken?.checksum ?? ""}`,
    };
  const outcome = facts.restored;
  if (!outcome) return record;
  return outcome.outcome === CLUSTER_SNAPSHOT_REASONS.Restored
    ? { type: "Normal", reason: outcome.outcome, message: outcome.message }
    : { type: "Warning", reason: outcome.outcome, message: outcome.message };
}

/** One step of a snapshot: the generic step with the kind's own parts. */
export const stepClusterSnapshot = storedStateStep<SnapshotStepInput, SnapshotFacts, SnapshotCommand>({
  machine: clusterSnapshotMachine,
  facts: snapshotFacts,
  finalizer: SNAPSHOT_FINALIZER,
  actions: {
    takeSnapshot: (_, { input }) => ({
      kind: "snapshot",
      snapshot: snapshotReference(input.object, input.root),
    }),
    restoreSnapshot: (_, { input, facts }) =>
      facts.restoreRequested === undefined
        ? undefined
        : {
            kind: "restore",
            snapshot: recordedReference(input.object, input.root),
            request: facts.restoreRequested,
          },
    // Nothing of ours to remove without our finalizer (never set, or a person gave the data up by removing it).
    removeData: (_, { input, facts }) =>
      facts.hasFinalizer
        ? { kind: "remove", snapshot: recordedReference(input.object, input.root) }
        : undefined,
  },
  event: (record, { input, facts }) => eventOf(record, input, facts),
  status: ({ input, facts, state, phase, previousState }) => {
    const { object, now } = input;
    const generation = object.metadata.generation ?? 0;
    const taken = facts.taken;
    const reference = snapshotReference(object, input.root);
    const recorded: ClusterSnapshotStatus = taken
      ? {
          ...object.status,
          cluster: {
            uid: taken.cluster.uid,
            ...(taken.cluster.endpoint ? { endpoint: taken.cluster.endpoint } : {}),
          },
          location: recordedLocation(reference),
          kubernetesVersion: taken.kubernetesVersion,
          takenAt: taken.takenAt,
          size: taken.size,
          checksum: taken.checksum,
        }
      : { ...object.status };
    const answered = facts.restored;
    const lastRestore = answered
      ? { request: answered.request, time: now, outcome: answered.outcome, message: answered.message }
      : recorded.lastRestore;
    const withRestore = { ...recorded, ...(lastRestore ? { lastRestore } : {}) };
    // A failed snapshot keeps the reason it failed for, whatever its Cluster does since.
    // A deleted one keeps what it said of the snapshot: the Removed condition tells the deletion.
    const keepReady = (state === "failed" && previousState === "failed") || state.startsWith("deleting");
    const restored = restoredCondition(input, state, lastRestore);
    const removed = removedCondition(input, state, facts);
    return {
      ...withRestore,
      observedGeneration: generation,
      ...(phase ? { phase } : {}),
      state,
      conditions: mergeConditions(
        object.status?.conditions,
        [
          ...(keepReady ? [] : [readyCondition(input, state, withRestore)]),
          ...(restored ? [restored] : []),
          ...(removed ? [removed] : []),
        ],
        generation,
        now,
      ),
    };
  },
});
