/** The ClusterSnapshotSchedule's pure step, on the engine's generic step: only what is the kind's own. */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import type { ClusterSnapshotSchedule } from "../../api/cluster-snapshot-schedule.ts";
import {
  CLUSTER_SNAPSHOT_API_VERSION,
  CLUSTER_SNAPSHOT_KIND,
  SNAPSHOT_CLUSTER_LABEL,
} from "../../api/constants/cluster-snapshot.ts";
import {
  SCHEDULE_LABEL,
  SCHEDULED_AT_ANNOTATION,
  SNAPSHOT_SCHEDULE_API_VERSION,
  SNAPSHOT_SCHEDULE_KIND,
  SNAPSHOT_SCHEDULE_REASONS,
} from "../../api/constants/cluster-snapshot-schedule.ts";
import { parseDuration } from "../../api/duration.ts";
import { type ScheduleStepBasics, scheduleStatus, untilNextTimeDue } from "../shared/cluster-schedule.ts";
import { selectedNames } from "../shared/cluster-selection.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { namesShown } from "../shared/names-shown.ts";
import { rfc3339 } from "../shared/rfc3339.ts";
import { storedStateStep } from "../shared/stored-state.ts";
import { type CreatedSlot, clusterSnapshotScheduleMachine, type SnapshotScheduleFacts } from "./machine.ts";
import { expiredSnapshots } from "./retention.ts";
import { scheduleProblems, slotStamp, slotsAt } from "./slots.ts";

/** The kind's finalizer: never set (its snapshots are its owned objects; deleting it deletes them), named for the generic step. */
export const SNAPSHOT_SCHEDULE_FINALIZER = "engine.openmcp.cloud/cluster-snapshot-schedule";

/** What the runtime does for a schedule: make these ClusterSnapshots (for one time due), or delete these. */
export type SnapshotScheduleCommand =
  | { readonly kind: "create"; readonly slot: string; readonly snapshots: readonly ClusterSnapshot[] }
  | { readonly kind: "delete"; readonly names: readonly string[] };

/** What one step is given: the schedule, the Clusters and its snapshots in its namespace, what this engine did, and `nowMs`. */
export interface SnapshotScheduleStepInput extends ScheduleStepBasics {
  readonly object: ClusterSnapshotSchedule;
  readonly clusters: readonly Cluster[];
  /** The ClusterSnapshots labelled with this schedule's name in its namespace. */
  readonly snapshots: readonly ClusterSnapshot[];
  /** The time due this engine last made snapshots for (until the status records it). */
  readonly created?: CreatedSlot;
  /** Snapshots this engine deleted whose deletion the cache may not show yet: not named again. */
  readonly deleted?: readonly string[];
}

/** The ClusterSnapshot of `cluster` for the time due `slotMs`: named, labelled and owned so retention finds it. */
export function scheduledSnapshot(
  schedule: ClusterSnapshotSchedule,
  cluster: string,
  slotMs: number,
): ClusterSnapshot {
  const name = schedule.metadata.name ?? "";
  return {
    apiVersion: CLUSTER_SNAPSHOT_API_VERSION,
    kind: CLUSTER_SNAPSHOT_KIND,
    metadata: {
      name: `${name}-${cluster}-${slotStamp(slotMs)}`,
      namespace: schedule.metadata.namespace ?? "",
      labels: { [SCHEDULE_LABEL]: name, [SNAPSHOT_CLUSTER_LABEL]: cluster },
      annotations: { [SCHEDULED_AT_ANNOTATION]: rfc3339(slotMs) },
      ownerReferences: [
        {
          apiVersion: SNAPSHOT_SCHEDULE_API_VERSION,
          kind: SNAPSHOT_SCHEDULE_KIND,
          name,
          uid: schedule.metadata.uid ?? "",
          // No blockOwnerDeletion: it would need update on the schedule's finalizers where the admission plugin
          // OwnerReferencesPermissionEnforcement runs; the collector deletes the snapshots after the schedule anyway.
          controller: true,
        },
      ],
    },
    spec: {
      cluster: { name: cluster },
      ...(schedule.spec.storage ? { storage: schedule.spec.storage } : {}),
    },
  };
}

/** The facts of one look, from the input alone. */
export function snapshotScheduleFacts(input: SnapshotScheduleStepInput): SnapshotScheduleFacts {
  const { object, nowMs } = input;
  const problems = scheduleProblems(object.spec?.every, object.spec?.keep);
  const selected = selectedNames(object.spec ?? {}, object.metadata.namespace ?? "", input.clusters);
  if (problems.length > 0) return { problems, selected, due: false, expired: [] };
  const anchorMs = Date.parse(object.metadata.creationTimestamp ?? "") || nowMs;
  const at = slotsAt(anchorMs, parseDuration(object.spec.every) ?? 0, nowMs);
  const latest = at.latestMs === undefined ? undefined : rfc3339(at.latestMs);
  const recorded = object.status?.lastScheduled;
  const created = input.created && input.created.slot === latest ? input.created : undefined;
  const newer = latest !== undefined && (recorded === undefined || Date.parse(latest) > Date.parse(recorded));
  const deleted = new Set(input.deleted ?? []);
  return {
    problems,
    ...(latest !== undefined ? { latest } : {}),
    next: rfc3339(at.nextMs),
    nextAtMs: at.nextMs,
    selected,
    due: newer && created === undefined,
    ...(created ? { created } : {}),
    expired: expiredSnapshots(input.snapshots, object.spec.keep).filter((name) => !deleted.has(name)),
  };
}

/** The Event of a transition, with what only the step knows. */
function eventOf(
  record: EventRecord,
  input: SnapshotScheduleStepInput,
  facts: SnapshotScheduleFacts,
): EventRecord {
  if (record.reason === SNAPSHOT_SCHEDULE_REASONS.SnapshotsCreated) {
    const clusters = facts.created?.clusters ?? [];
    return {
      ...record,
      message:
        clusters.length === 0
          ? `no Cluster selected at ${facts.created?.slot}: no snapshot made`
          : `made ClusterSnapshots of ${clusters.length} Cluster(s) for ${facts.created?.slot}: ${namesShown(clusters)}`,
    };
  }
  if (record.reason === SNAPSHOT_SCHEDULE_REASONS.SnapshotsPruned)
    return {
      ...record,
      message: `deleted ${facts.expired.length} ClusterSnapshot(s) beyond keep ${input.object.spec.keep} (their data with them): ${namesShown(facts.expired)}`,
    };
  return record;
}

/** One step of a schedule: the generic step with the kind's own parts. */
export const stepClusterSnapshotSchedule = storedStateStep<
  SnapshotScheduleStepInput,
  SnapshotScheduleFacts,
  SnapshotScheduleCommand
>({
  machine: clusterSnapshotScheduleMachine,
  facts: snapshotScheduleFacts,
  finalizer: SNAPSHOT_SCHEDULE_FINALIZER,
  actions: {
    createSnapshots: (_, { input, facts }) =>
      facts.latest === undefined
        ? undefined
        : {
            kind: "create",
            slot: facts.latest,
            snapshots: facts.selected.map((cluster) =>
              scheduledSnapshot(input.object, cluster, Date.parse(facts.latest ?? "")),
            ),
          },
    deleteSnapshots: (_, { facts }) =>
      facts.expired.length === 0 ? undefined : { kind: "delete", names: facts.expired },
  },
  event: (record, { input, facts }) => eventOf(record, input, facts),
  status: (transitioned) => {
    const { input, facts } = transitioned;
    const recorded = input.object.status?.lastScheduled;
    const lastScheduled =
      facts.created && (recorded === undefined || Date.parse(facts.created.slot) > Date.parse(recorded))
        ? facts.created.slot
        : recorded;
    return scheduleStatus(transitioned, {
      reasons: {
        scheduled: SNAPSHOT_SCHEDULE_REASONS.Scheduled,
        invalid: SNAPSHOT_SCHEDULE_REASONS.InvalidSchedule,
        failed: SNAPSHOT_SCHEDULE_REASONS.ScheduleFailed,
      },
      scheduledMessage: `a snapshot of each selected Cluster every ${input.object.spec.every}, the last ${input.object.spec.keep} kept; status.nextScheduled is the next`,
      nextField: "nextScheduled",
      times: {
        ...(lastScheduled ? { lastScheduled } : {}),
        ...(facts.next ? { nextScheduled: facts.next } : {}),
      },
    });
  },
  atRest: ({ input, facts }) => untilNextTimeDue(facts, input.nowMs),
});
