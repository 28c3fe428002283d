/**
 * The ClusterSnapshotSchedule statechart: scheduled → taking (ClusterSnapshots made for the time due) → scheduled;
 * scheduled → pruning (those beyond `keep` deleted) → scheduled; invalid. Pure: no I/O, no clock (now is a fact).
 */
import { setup } from "xstate";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import { type ClusterScheduleFacts, isSound, scheduleGuards } from "../shared/cluster-schedule.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";
import {
  actingScheduleState,
  invalidScheduleState,
  restingScheduleState,
} from "../shared/schedule-states.ts";

/** The snapshots this engine made for one time due (kept in memory until the status records it). */
export interface CreatedSlot {
  /** The time due, RFC 3339. */
  readonly slot: string;
  /** The Clusters it made snapshots of. */
  readonly clusters: readonly string[];
}

/** What one look at a schedule knows, level-based: the schedule's facts, its times due and its snapshots. */
export interface SnapshotScheduleFacts extends ClusterScheduleFacts {
  /** The latest time due at or before now (RFC 3339); absent: none yet. */
  readonly latest?: string;
  /** The next time due (RFC 3339). */
  readonly next?: string;
  /** This engine made the snapshots of the latest time due (in this reconcile or before). */
  readonly created?: CreatedSlot;
  /** The schedule's snapshots beyond what it keeps, not being deleted yet (sorted names). */
  readonly expired: readonly string[];
}

/** The one event: "here is what the world looks like now". */
export type SnapshotScheduleEvent = ObservedEvent<SnapshotScheduleFacts>;

const when = whenObserved<SnapshotScheduleFacts>;

/** Events the step fills in (the Clusters, the snapshots deleted). */
const CREATED_EVENT: EventRecord = { type: "Normal", reason: "SnapshotsCreated", message: "" };
const PRUNED_EVENT: EventRecord = { type: "Normal", reason: "SnapshotsPruned", message: "" };

const createdLatest = (facts: SnapshotScheduleFacts) =>
  facts.created !== undefined && facts.created.slot === facts.latest;

/** The machine: named guards and actions, then the chart. */
export const clusterSnapshotScheduleMachine = setup({
  types: observedMachineTypes<SnapshotScheduleFacts>(),
  guards: {
    ...scheduleGuards(createdLatest),
    isCreated: when(createdLatest),
    hasExpired: when((facts) => isSound(facts) && facts.expired.length > 0),
    isPruned: when((facts) => facts.expired.length === 0),
  },
  actions: actionsAsData("createSnapshots", "deleteSnapshots"),
}).createMachine({
  id: "clusterSnapshotSchedule",
  context: {},
  initial: "scheduled",
  states: {
    scheduled: restingScheduleState(
      "At rest: the latest time due has its snapshots and nothing is beyond keep; looks again at the next time due.",
      "taking",
      { guard: "hasExpired", target: "pruning" },
    ),
    taking: actingScheduleState({
      state: "taking",
      description:
        "A time due newer than the last one taken (at once if it was missed): a ClusterSnapshot of each selected Cluster is made, owned by the schedule.",
      phase: "Taking",
      action: "createSnapshots",
      acted: "isCreated",
      event: CREATED_EVENT,
    }),
    pruning: {
      description:
        "Per Cluster, snapshots beyond the newest keep complete ones (never the newest) are deleted; each removes its data before it goes.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Pruning`],
      entry: ["deleteSnapshots", recordEvent(PRUNED_EVENT)],
      on: { observed: { guard: "hasExpired", target: "pruning", reenter: true } },
      always: [
        { guard: "isInvalid", target: "invalid" },
        { guard: "isDue", target: "taking" },
        { guard: "isPruned", target: "scheduled" },
      ],
    },
    invalid: invalidScheduleState(
      "every does not parse or is shorter than 1m, or keep is below 1: nothing is taken or deleted until it is fixed.",
    ),
  },
});
