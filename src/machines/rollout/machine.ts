/**
 * The Rollout statechart: pending → progressing ⇄ paused → (applying →) succeeded | halted | aborted. Pure: no I/O,
 * no clock. `applying` is a settings run's last step: its ProviderConfig is given the new settings.
 */
import { setup } from "xstate";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";
import type { RunProgress } from "./progress.ts";

/** What one look at a rollout knows, level-based. */
export interface RolloutFacts {
  /** `gates.notBefore` has passed (or there is none). */
  readonly startable: boolean;
  readonly paused: boolean;
  readonly aborted: boolean;
  /** The run as it stands after this look (see progress.ts). */
  readonly progress: Pick<RunProgress, "changes" | "failure" | "complete">;
  /** Targets of the current stage whose snapshot before the change is to be made (`snapshots.beforeChange`). */
  readonly snapshotsWanted?: readonly string[];
  /** What is wrong with the input (a settings run's ProviderConfig missing, or its settings refused): nothing is changed. */
  readonly problem?: { readonly reason: string; readonly message: string };
  /** A settings run: its patch changes nothing more in its ProviderConfig (absent: not a settings run). */
  readonly settingsApplied?: boolean;
}

/** The one event: "here is what the world looks like now". */
export type RolloutEvent = ObservedEvent<RolloutFacts>;

const when = whenObserved<RolloutFacts>;

/** Events the step fills in with names and messages. */
const STARTED: EventRecord = { type: "Normal", reason: "Started", message: "" };
const HALTED: EventRecord = { type: "Warning", reason: "Halted", message: "" };
const SUCCEEDED: EventRecord = { type: "Normal", reason: "Succeeded", message: "" };
const ABORTED: EventRecord = { type: "Normal", reason: "Aborted", message: "" };

/** Where a run that is under way (progressing, paused) goes first: aborted, halted, done, or on to its settings. */
const RUN_EXITS = [
  { guard: "isAborted", target: "aborted", actions: [recordEvent(ABORTED)] },
  { guard: "hasFailure", target: "halted", actions: [recordEvent(HALTED)] },
  { guard: "isComplete", target: "succeeded", actions: [recordEvent(SUCCEEDED)] },
  { guard: "hasSettingsToApply", target: "applying" },
] as const;

/** The machine: named guards and actions, then the chart. */
export const rolloutMachine = setup({
  types: observedMachineTypes<RolloutFacts>(),
  guards: {
    isAborted: when((facts) => facts.aborted),
    isStartable: when((facts) => facts.startable && facts.problem === undefined),
    hasFailure: when((facts) => facts.progress.failure !== undefined),
    // Done, for a version run or once the config holds a settings run's settings.
    isComplete: when(
      (facts) =>
        facts.progress.failure === undefined && facts.progress.complete && facts.settingsApplied !== false,
    ),
    // Every target done, the ProviderConfig still to be given the new settings (and nothing wrong with it).
    hasSettingsToApply: when(
      (facts) =>
        facts.progress.failure === undefined &&
        facts.progress.complete &&
        facts.settingsApplied === false &&
        facts.problem === undefined,
    ),
    isSettingsApplied: when((facts) => facts.settingsApplied === true),
    isSettingsNotApplied: when((facts) => facts.settingsApplied === false && facts.problem === undefined),
    isPaused: when((facts) => facts.paused),
    isResumed: when((facts) => !facts.paused),
    // Only while nothing stops the run: a paused, aborted or failed run asks no Cluster, whatever the plan says.
    hasChanges: when(
      (facts) =>
        facts.progress.changes.length > 0 &&
        facts.problem === undefined &&
        !facts.paused &&
        !facts.aborted &&
        facts.progress.failure === undefined,
    ),
    // The same: a paused, aborted or failed run takes no snapshots either.
    needsSnapshots: when(
      (facts) =>
        (facts.snapshotsWanted?.length ?? 0) > 0 &&
        !facts.paused &&
        !facts.aborted &&
        facts.progress.failure === undefined,
    ),
  },
  actions: actionsAsData("changeClusters", "snapshotClusters", "applySettings"),
}).createMachine({
  id: "rollout",
  context: {},
  initial: "pending",
  states: {
    pending: {
      description: "Not started: waits for gates.notBefore; the target set is frozen when it starts.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Pending`],
      always: [
        { guard: "isAborted", target: "aborted", actions: [recordEvent(ABORTED)] },
        { guard: "isStartable", target: "progressing", actions: [recordEvent(STARTED)] },
      ],
    },
    progressing: {
      description:
        "Stage by stage, canary first: asks the next Clusters for the version within maxUnavailable once the gates pass.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Progressing`],
      entry: [{ type: "snapshotClusters" }, { type: "changeClusters" }],
      on: {
        observed: [
          { guard: "hasChanges", target: "progressing", reenter: true },
          // snapshots.beforeChange: the stage's Clusters still to ask are snapshotted first (the preflight holds them).
          { guard: "needsSnapshots", actions: [{ type: "snapshotClusters" }] },
        ],
      },
      always: [...RUN_EXITS, { guard: "isPaused", target: "paused" }],
    },
    paused: {
      description: "spec.paused: no Cluster is asked; those changing go on and are watched.",
      tags: [REQUEUE.poll, `${PHASE_TAG}Paused`],
      always: [...RUN_EXITS, { guard: "isResumed", target: "progressing" }],
    },
    applying: {
      description:
        "Every target runs the new settings: the ProviderConfig is given them (the same settings, so no Cluster is updated again).",
      tags: [REQUEUE.poll, `${PHASE_TAG}Progressing`],
      entry: [{ type: "applySettings" }],
      on: { observed: { guard: "isSettingsNotApplied", target: "applying", reenter: true } },
      always: [
        { guard: "isAborted", target: "aborted", actions: [recordEvent(ABORTED)] },
        {
          guard: "isSettingsApplied",
          target: "succeeded",
          actions: [recordEvent(SUCCEEDED)],
        },
      ],
    },
    halted: {
      description:
        "A target failed at the new version (or timed out): nothing more is changed; a person acts.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Halted`],
    },
    succeeded: {
      description:
        "Every target is at the new version and runs the new settings (or was deleted meanwhile); the ProviderConfig holds them.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Succeeded`],
    },
    aborted: {
      description:
        "spec.abort: stopped for good; Clusters asked already keep the new version and settings while the Rollout exists.",
      tags: [REQUEUE.resync, `${PHASE_TAG}Aborted`],
    },
  },
});
