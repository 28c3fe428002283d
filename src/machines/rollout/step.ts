/** The Rollout's pure step, on the engine's generic step: the facts of one look, the command, the status. */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { ClusterSnapshot } from "../../api/cluster-snapshot.ts";
import type { JsonObject } from "../../api/common.ts";
import {
  APPROVE_STAGE_ANNOTATION,
  PREFLIGHT_CONDITION,
  ROLLOUT_REASONS,
} from "../../api/constants/rollout.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import type { Rollout, RolloutSettingsStatus, RolloutTarget } from "../../api/rollout.ts";
import { mergeConditions } from "../shared/conditions.ts";
import type { StepBasics } from "../shared/kind-step.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import { namesShown } from "../shared/names-shown.ts";
import { storedStateStep } from "../shared/stored-state.ts";
import { type RolloutFacts, rolloutMachine } from "./machine.ts";
import { blocking, type DeprecatedApiRead, preflightCondition, preflightOf } from "./preflight.ts";
import { progressOf, type RunProgress, type TargetChange, whatOf } from "./progress.ts";
import { mergeSettings, runName, settingsHash } from "./settings.ts";
import { snapshotBeforeChange, snapshotFindings } from "./snapshots.ts";
import { freezeTargets, lookAt, type TargetLook, type Wanted } from "./targets.ts";

/** The rollout kind's finalizer: never set (a rollout leaves nothing behind), named for the generic step. */
export const ROLLOUT_FINALIZER = "engine.openmcp.cloud/rollout";

/**
 * What the runtime does for a rollout: ask these Clusters for `version` and name the settings run on them (each of
 * the two the run brings), each write guarded by its resourceVersion.
 */
export interface ChangeCommand {
  readonly kind: "change";
  readonly version?: string;
  /** `<name>/<uid>` of the rollout, recorded on each Cluster it changes (and naming a settings run). */
  readonly changedBy: string;
  /** A settings run: the Clusters get the annotation naming it (the runtime then gives them its settings). */
  readonly settings: boolean;
  readonly clusters: readonly TargetChange[];
}

/** At a settings run's end: give its ProviderConfig the new settings, guarded by the config's resourceVersion. */
export interface ApplySettingsCommand {
  readonly kind: "applySettings";
  readonly providerConfig: string;
  /** The config's settings with the run's patch merged over them: never logged, never in an Event. */
  readonly settings: JsonObject;
  readonly resourceVersion: string;
}

/** What the runtime does for a rollout with `snapshots.beforeChange`: make these ClusterSnapshots first. */
export interface SnapshotBeforeChangeCommand {
  readonly kind: "snapshot";
  readonly snapshots: readonly ClusterSnapshot[];
}

/** Every command of a rollout. */
export type RolloutCommand = ChangeCommand | ApplySettingsCommand | SnapshotBeforeChangeCommand;

/**
 * What one step is given: the rollout, the Clusters of its namespace, the ClusterProfiles, what the targets' API
 * servers say of deprecated APIs (by Cluster uid; a target not in it was not read), and `nowMs`.
 */
export interface RolloutStepInput extends StepBasics {
  readonly object: Rollout;
  readonly clusters: readonly Cluster[];
  readonly profiles: readonly ClusterProfile[];
  readonly deprecatedApis?: ReadonlyMap<string, DeprecatedApiRead>;
  /** The ClusterSnapshots of its namespace this rollout made (`snapshots.beforeChange`). */
  readonly snapshots?: readonly ClusterSnapshot[];
  /** A settings run: its ProviderConfig as read (undefined: it does not exist). */
  readonly providerConfig?: ProviderConfig;
  /** A settings run: why its backend refuses the patched settings (undefined: it takes them, or cannot say). */
  readonly settingsRefused?: string;
  readonly nowMs: number;
  readonly timing?: RequeueTiming;
}

/** The facts, with the whole progress the status is made from. */
export interface RolloutStepFacts extends RolloutFacts {
  readonly progress: RunProgress;
  /** A settings run: the config's settings with the patch over them, and their hashes. */
  readonly settings?: { readonly merged: JsonObject; readonly from: string; readonly to: string };
}

/** A settings run's input problem (its config missing, its settings refused); undefined: none, or not a settings run. */
export function settingsProblem(input: RolloutStepInput): RolloutFacts["problem"] {
  const wanted = input.object.spec.settings;
  if (!wanted) return undefined;
  if (!input.providerConfig)
    return {
      reason: ROLLOUT_REASONS.ProviderConfigNotFound,
      message: `ProviderConfig ${wanted.providerConfig} (spec.settings.providerConfig) does not exist: nothing is changed until it does`,
    };
  if (input.settingsRefused !== undefined)
    return {
      reason: ROLLOUT_REASONS.SettingsRefused,
      message: `the backend of ProviderConfig ${wanted.providerConfig} refuses the new settings: ${input.settingsRefused}; nothing is changed`,
    };
  return undefined;
}

/** A settings run's settings: the patch over the config's, by hash; `from` is the one recorded at the start. */
function settingsOf(input: RolloutStepInput): RolloutStepFacts["settings"] {
  const wanted = input.object.spec.settings;
  if (!wanted || !input.providerConfig) return undefined;
  const own = input.providerConfig.spec.settings;
  const merged = mergeSettings(own, wanted.patch);
  return {
    merged,
    from: input.object.status?.settings?.from ?? settingsHash(own),
    to: settingsHash(merged),
  };
}

/** States after which the run is over: its status stays as recorded. */
const OVER: ReadonlySet<string> = new Set(["halted", "succeeded", "aborted"]);

/** The progress recorded by a run that is over (nothing more is asked or watched). */
function recordedProgress(object: Rollout): RunProgress {
  const status = object.status;
  return {
    targets: status?.targets ?? [],
    stages: status?.stages ?? [],
    ...(status?.currentStage ? { currentStage: status.currentStage } : {}),
    changes: [],
    complete: status?.state === "succeeded",
    waitingFor: "",
  };
}

/** The facts of one look, from the input alone. */
export function rolloutFacts(input: RolloutStepInput): RolloutStepFacts {
  const { object, nowMs } = input;
  const spec = object.spec;
  const notBefore = Date.parse(spec.gates?.notBefore ?? "");
  const startable = Number.isNaN(notBefore) || nowMs >= notBefore;
  const paused = spec.paused === true;
  const aborted = spec.abort === true;
  if (OVER.has(object.status?.state ?? "")) {
    return { startable, paused, aborted, progress: recordedProgress(object) };
  }
  const problem = settingsProblem(input);
  const settings = settingsOf(input);
  const namespace = object.metadata.namespace ?? "";
  const targets: readonly RolloutTarget[] =
    object.status?.targets ?? freezeTargets(spec, namespace, input.clusters, input.profiles);
  const byName = new Map(
    input.clusters
      .filter((cluster) => cluster.metadata.namespace === namespace)
      .map((cluster) => [cluster.metadata.name ?? "", cluster]),
  );
  const wanted: Wanted = {
    ...(spec.version !== undefined ? { version: spec.version } : {}),
    ...(spec.settings ? { settingsRun: runName(object) } : {}),
    ...(settings ? { settingsHash: settings.to } : {}),
  };
  const looks = new Map<string, TargetLook>(
    targets.map((target) => [target.name, lookAt(target, byName.get(target.name), wanted)]),
  );
  const approved = object.metadata.annotations?.[APPROVE_STAGE_ANNOTATION];
  const profiles = new Map(input.profiles.map((profile) => [profile.metadata.name ?? "", profile]));
  const preflight = (target: RolloutTarget) => {
    const cluster = byName.get(target.name);
    return cluster
      ? [
          ...preflightOf(spec, {
            cluster,
            profile: profiles.get(cluster.spec.profile),
            deprecated: input.deprecatedApis?.get(target.uid),
          }),
          ...snapshotFindings(object, target, input.snapshots ?? []),
        ]
      : [];
  };
  const progress = progressOf({
    preflight,
    spec,
    targets,
    looks,
    ...(approved ? { approved } : {}),
    changing: startable && !paused && !aborted,
    ...(problem ? { held: problem.message } : {}),
    what: whatOf(spec),
    nowMs,
  });
  const snapshotsWanted = (progress.preflight ?? [])
    .filter((finding) => finding.reason === ROLLOUT_REASONS.SnapshotMissing)
    .map((finding) => finding.cluster);
  return {
    startable,
    paused,
    aborted,
    progress,
    ...(snapshotsWanted.length > 0 ? { snapshotsWanted } : {}),
    ...(problem ? { problem } : {}),
    ...(settings
      ? { settings, settingsApplied: settings.to === settingsHash(input.providerConfig?.spec.settings) }
      : {}),
    ...(spec.settings && !settings ? { settingsApplied: false } : {}),
  };
}

/** What the run asks of a Cluster, in words, settings by hash. */
function describeChange(object: Rollout, facts: RolloutStepFacts): string {
  const settings = facts.settings ? `settings ${facts.settings.from} → ${facts.settings.to}` : "";
  return [object.spec.version, settings].filter(Boolean).join(" and ");
}

/** The settings part of the status: from and to by hash, and when the config got them. */
function settingsStatus(
  object: Rollout,
  settings: NonNullable<RolloutStepFacts["settings"]>,
  state: string,
  now: string,
): RolloutSettingsStatus {
  const appliedAt = object.status?.settings?.appliedAt ?? (state === "succeeded" ? now : undefined);
  return {
    providerConfig: object.spec.settings?.providerConfig ?? "",
    from: settings.from,
    to: settings.to,
    ...(appliedAt ? { appliedAt } : {}),
  };
}

const plural = (count: number) => `${count} Cluster${count === 1 ? "" : "s"}`;

/** The Events of the machine's transitions, with the names and messages only the step knows. */
function transitionEvent(record: EventRecord, object: Rollout, progress: RunProgress): EventRecord {
  const version = whatOf(object.spec);
  const done = progress.targets.filter((target) => target.progress === "done").length;
  const skipped = progress.targets.filter((target) => target.progress === "skipped").length;
  switch (record.reason) {
    case "Started":
      return {
        ...record,
        message: `froze ${plural(progress.targets.length)} for ${version} in stages ${progress.stages
          .map((stage) => `${stage.name} (${stage.targets})`)
          .join(", ")}`,
      };
    case "Halted":
      return {
        ...record,
        reason: progress.failure?.timedOut ? ROLLOUT_REASONS.TargetTimedOut : ROLLOUT_REASONS.TargetFailed,
        message: `halted: Cluster ${progress.failure?.name} failed at ${version}: ${progress.failure?.message}`,
      };
    case "Succeeded":
      return { ...record, message: `${plural(done)} at ${version}${skipped ? `, ${skipped} skipped` : ""}` };
    default:
      return {
        ...record,
        message: `aborted by spec.abort: ${done} of ${plural(progress.targets.length)} done`,
      };
  }
}

/** The Ready condition of the run's state. */
function readyCondition(
  state: string,
  object: Rollout,
  progress: RunProgress,
  problem: RolloutFacts["problem"],
) {
  const version = whatOf(object.spec);
  // Bad input says so while the run is not over, whatever else holds it.
  if (problem && !OVER.has(state)) return { status: "False" as const, ...problem };
  switch (state) {
    case "pending":
      return {
        status: "False" as const,
        reason: ROLLOUT_REASONS.NotBefore,
        message: `starts at ${object.spec.gates?.notBefore} (gates.notBefore)`,
      };
    case "paused":
      return { status: "False" as const, reason: ROLLOUT_REASONS.Paused, message: "spec.paused is true" };
    case "applying":
      return {
        status: "False" as const,
        reason: ROLLOUT_REASONS.Progressing,
        message: `every target runs the new settings: giving them to ProviderConfig ${object.spec.settings?.providerConfig}`,
      };
    case "halted":
      return {
        status: "False" as const,
        reason: progress.failure?.timedOut ? ROLLOUT_REASONS.TargetTimedOut : ROLLOUT_REASONS.TargetFailed,
        message: `Cluster ${progress.failure?.name} failed at ${version}: ${progress.failure?.message}; nothing more is changed`,
      };
    case "succeeded":
      return {
        status: "True" as const,
        reason: ROLLOUT_REASONS.Succeeded,
        message: `every target is at ${version} (or was deleted meanwhile)${object.spec.settings ? `; ProviderConfig ${object.spec.settings.providerConfig} holds the new settings` : ""}`,
      };
    case "aborted":
      return { status: "False" as const, reason: ROLLOUT_REASONS.Aborted, message: "spec.abort is true" };
    default: {
      const blocked = blocking(progress.preflight ?? [])[0];
      return {
        status: "False" as const,
        reason: blocked?.reason ?? ROLLOUT_REASONS.Progressing,
        message: progress.waitingFor ? `waiting for ${progress.waitingFor}` : `rolling out ${version}`,
      };
    }
  }
}

/** One step of a rollout: the generic step with the kind's own parts. */
export const stepRollout = storedStateStep<RolloutStepInput, RolloutStepFacts, RolloutCommand>({
  machine: rolloutMachine,
  facts: rolloutFacts,
  finalizer: ROLLOUT_FINALIZER,
  actions: {
    snapshotClusters: (_, { input, facts }) => {
      const wanted = new Set(facts.snapshotsWanted ?? []);
      const targets = facts.progress.targets.filter((target) => wanted.has(target.name));
      return targets.length > 0
        ? { kind: "snapshot", snapshots: targets.map((target) => snapshotBeforeChange(input.object, target)) }
        : undefined;
    },
    changeClusters: (_, { input, facts }) =>
      facts.progress.changes.length > 0
        ? {
            kind: "change",
            ...(input.object.spec.version !== undefined ? { version: input.object.spec.version } : {}),
            changedBy: runName(input.object),
            settings: input.object.spec.settings !== undefined,
            clusters: facts.progress.changes,
          }
        : undefined,
    applySettings: (_, { input, facts }) =>
      facts.settings && input.providerConfig && !facts.settingsApplied
        ? {
            kind: "applySettings",
            providerConfig: input.providerConfig.metadata.name ?? "",
            settings: facts.settings.merged,
            resourceVersion: input.providerConfig.metadata.resourceVersion ?? "",
          }
        : undefined,
  },
  event: (record, { input, facts }) => transitionEvent(record, input.object, facts.progress),
  status: ({ input: { object, now }, facts, state, phase }) => {
    // A run that is over keeps what it recorded: its verdict, its targets, its condition.
    if (OVER.has(object.status?.state ?? "") && object.status) return object.status;
    const progress = facts.progress;
    const started = state !== "pending";
    const { currentStage: _, ...rest } = object.status ?? {};
    return {
      ...rest,
      observedGeneration: object.metadata.generation ?? 0,
      ...(phase ? { phase } : {}),
      state,
      ...(started && progress.currentStage && !OVER.has(state)
        ? { currentStage: progress.currentStage }
        : {}),
      ...(started ? { stages: progress.stages, targets: progress.targets } : {}),
      ...(started && facts.settings && object.spec.settings
        ? { settings: settingsStatus(object, facts.settings, state, now) }
        : {}),
      conditions: mergeConditions(
        object.status?.conditions,
        [
          { type: "Ready", ...readyCondition(state, object, progress, facts.problem) },
          // Said when the current stage was checked this look; kept as it was otherwise (a gate holds, or the end).
          ...(progress.preflight && progress.currentStage
            ? [
                {
                  type: PREFLIGHT_CONDITION,
                  ...preflightCondition(progress.currentStage, progress.preflight),
                },
              ]
            : []),
        ],
        object.metadata.generation ?? 0,
        now,
      ),
    };
  },
  moreEvents: ({ input, commands: all, facts }) => {
    const stage = facts.progress.currentStage;
    const commands = all.filter((command): command is ChangeCommand => command.kind === "change");
    const snapshots = all.flatMap((command) => (command.kind === "snapshot" ? command.snapshots : []));
    const recorded = input.object.status?.stages?.find((entry) => entry.name === stage);
    // A stage starts with its first Clusters asked: nothing of it changing, done or failed as recorded before.
    const starts =
      commands.length > 0 && (!recorded || recorded.changing + recorded.done + recorded.failed === 0);
    return [
      ...(starts
        ? [
            {
              type: "Normal" as const,
              reason: ROLLOUT_REASONS.StageStarted,
              message: `stage ${stage} started`,
            },
          ]
        : []),
      ...commands.map((command) => ({
        type: "Normal" as const,
        reason: ROLLOUT_REASONS.ClustersChanged,
        message: `stage ${stage}: asked ${plural(command.clusters.length)} for ${describeChange(input.object, facts)}: ${namesShown(command.clusters.map((c) => c.name))}`,
      })),
      ...(snapshots.length > 0
        ? [
            {
              type: "Normal" as const,
              reason: ROLLOUT_REASONS.SnapshotsCreated,
              message: `stage ${stage}: snapshotting ${plural(snapshots.length)} before asking them for ${describeChange(input.object, facts)}: ${namesShown(snapshots.map((s) => s.spec.cluster.name))}`,
            },
          ]
        : []),
      ...all.flatMap((command) =>
        command.kind === "applySettings"
          ? [
              {
                type: "Normal" as const,
                reason: ROLLOUT_REASONS.SettingsApplied,
                message: `every target runs settings ${facts.settings?.to}: ProviderConfig ${command.providerConfig} given them (from ${facts.settings?.from})`,
              },
            ]
          : [],
      ),
    ];
  },
  atRest: ({ input, state }) => {
    const notBefore = Date.parse(input.object.spec.gates?.notBefore ?? "");
    return state === "pending" && !Number.isNaN(notBefore)
      ? Math.max(0, notBefore - input.nowMs) + 250
      : undefined;
  },
});
