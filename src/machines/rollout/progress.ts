/**
 * The heart of a rollout, pure: given the frozen targets as recorded, what each one's Cluster shows now, the spec
 * and now, how every target stands and which Clusters to ask for the new version next.
 *
 * Guarantees:
 * - Stages go in order: a stage's Clusters are asked only once every earlier stage's are done (or skipped), the
 *   gates passed (`readyForSeconds` since the last of the previous stage was done, the approval when asked).
 * - The canary is a stage of its own, the first: nothing else is asked before it is done; and until one target is
 *   done, at most `canary` are changing at once (so a canary deleted before it proved anything is not a pass).
 * - A change never makes more than `maxUnavailable` targets changing or not Ready at once.
 * - A Cluster is asked at most once: a target whose Cluster asks for the version already is taken as changing
 *   with no write (also when an earlier engine wrote it and died before recording it).
 * - A failed target stops every further change.
 * - No Cluster is asked while a preflight check blocks its stage (see preflight.ts): the stage waits, its Clusters
 *   changing already go on.
 */
import { ROLLOUT_DEFAULTS } from "../../api/constants/rollout.ts";
import type { RolloutSpec, RolloutTarget, StageProgress, TargetProgress } from "../../api/rollout.ts";
import { rfc3339 } from "../shared/rfc3339.ts";
import { blocking, type PreflightFinding } from "./preflight.ts";
import { stageNames, type TargetLook } from "./targets.ts";

/**
 * One Cluster to ask for the new version, guarded by the resourceVersion it was decided on; `generation` is the
 * spec it was decided on (a write refused because only its status moved since is sent again, see ask-cluster.ts).
 */
export interface TargetChange {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number;
}

/** What stops the run: the target that failed and why. */
export interface TargetFailure {
  readonly name: string;
  readonly timedOut: boolean;
  readonly message: string;
}

/** How the run stands after one look. */
export interface RunProgress {
  readonly targets: readonly RolloutTarget[];
  readonly stages: readonly StageProgress[];
  /** The first stage not finished (absent: every stage is). */
  readonly currentStage?: string;
  /** Clusters to ask for the new version now (empty while a gate, the budget or a failure holds them back). */
  readonly changes: readonly TargetChange[];
  readonly failure?: TargetFailure;
  /** Every target done or skipped. */
  readonly complete: boolean;
  /** What the run waits for, for people (empty: nothing). */
  readonly waitingFor: string;
  /** The preflight findings on the current stage's Clusters still to ask, when some were checked this look. */
  readonly preflight?: readonly PreflightFinding[];
}

/** What one look is given. */
export interface ProgressInput {
  readonly spec: RolloutSpec;
  readonly targets: readonly RolloutTarget[];
  /** What each target's Cluster shows, by target name. */
  readonly looks: ReadonlyMap<string, TargetLook>;
  /** The stage named by the approval annotation, if any. */
  readonly approved?: string;
  /** Whether Clusters may be asked now (not paused, not aborted). */
  readonly changing: boolean;
  readonly nowMs: number;
  /** The preflight checks of one target's Cluster (absent: none). */
  readonly preflight?: (target: RolloutTarget) => readonly PreflightFinding[];
  /** What the run brings, in words (`1.34.2`, `settings 3f2a…`); default `spec.version`. */
  readonly what?: string;
  /** Why no Cluster may be asked besides a pause (e.g. the settings run's ProviderConfig is missing). */
  readonly held?: string;
}

/** What a run brings, in words: its version, its settings, or both. */
export function whatOf(spec: RolloutSpec): string {
  const settings = spec.settings ? `ProviderConfig ${spec.settings.providerConfig}'s new settings` : "";
  return [spec.version, settings].filter(Boolean).join(" and ");
}

const FINISHED: ReadonlySet<TargetProgress> = new Set(["done", "skipped"]);
const STARTED: ReadonlySet<TargetProgress> = new Set(["changing", "done", "failed"]);

/** A target's progress after this look, from its recorded progress and its Cluster (level-based). */
function advanced(target: RolloutTarget, look: TargetLook, spec: RolloutSpec, nowMs: number): RolloutTarget {
  const seen = look.gone ? target : withSettingsHash(target, look.settingsHash);
  return progressed(seen, look, spec, nowMs);
}

/** The target with the settings hash its Cluster reports now (unchanged when it reports none). */
function withSettingsHash(target: RolloutTarget, hash: string | undefined): RolloutTarget {
  return hash === undefined || target.settingsHash === hash ? target : { ...target, settingsHash: hash };
}

function progressed(
  target: RolloutTarget,
  look: TargetLook,
  spec: RolloutSpec,
  nowMs: number,
): RolloutTarget {
  const now = rfc3339(nowMs);
  if (target.progress === "failed" || target.progress === "skipped") return target;
  if (look.gone) return { ...target, progress: "skipped", message: "deleted (or made anew) since the start" };
  if (target.progress === "pending") return target;
  if (look.failed !== undefined) return { ...target, progress: "failed", message: look.failed };
  if (target.progress === "done") return target;
  if (look.asked && look.settled) return { ...target, progress: "done", doneAt: now };
  const timeoutMs = (spec.timeoutSeconds ?? ROLLOUT_DEFAULTS.timeoutSeconds) * 1_000;
  const since = Date.parse(target.changedAt ?? "") || nowMs;
  if (nowMs - since > timeoutMs)
    return {
      ...target,
      progress: "failed",
      message: `not Ready at ${whatOf(spec)} within ${timeoutMs / 1_000} s (timeoutSeconds)`,
    };
  return target;
}

/** The counts of each stage, in order. */
function stageCounts(names: readonly string[], targets: readonly RolloutTarget[]): StageProgress[] {
  return names.map((name) => {
    const of = targets.filter((target) => target.stage === name);
    const count = (progress: TargetProgress) => of.filter((target) => target.progress === progress).length;
    return {
      name,
      targets: of.length,
      done: count("done"),
      changing: count("changing"),
      failed: count("failed"),
      skipped: count("skipped"),
    };
  });
}

/** Why the stage at `index` may not start yet (undefined: it may). */
function gateClosed(
  input: ProgressInput,
  targets: readonly RolloutTarget[],
  names: readonly string[],
  index: number,
): string | undefined {
  const { spec, nowMs } = input;
  const stage = names[index] ?? "";
  const readyForMs = (spec.gates?.readyForSeconds ?? ROLLOUT_DEFAULTS.readyForSeconds) * 1_000;
  if (index > 0 && readyForMs > 0) {
    const previous = targets.filter((target) => target.stage === names[index - 1]);
    const lastDone = Math.max(0, ...previous.map((target) => Date.parse(target.doneAt ?? "") || 0));
    if (nowMs < lastDone + readyForMs)
      return `stage ${stage}: the Clusters of stage ${names[index - 1]} to stay Ready until ${rfc3339(lastDone + readyForMs)} (readyForSeconds)`;
  }
  if (spec.gates?.approval) {
    const approvedIndex = input.approved === undefined ? -1 : names.indexOf(input.approved);
    if (approvedIndex < index)
      return `stage ${stage}: approval (annotation engine.openmcp.cloud/approve-stage: ${stage})`;
  }
  return undefined;
}

/** Where the run stands over `targets`: the first failure and the first stage not finished. */
function standing(targets: readonly RolloutTarget[], names: readonly string[]) {
  const failed = targets.find((target) => target.progress === "failed");
  const failure: TargetFailure | undefined = failed && {
    name: failed.name,
    timedOut: failed.message?.includes("timeoutSeconds") === true,
    message: failed.message ?? "failed",
  };
  const index = names.findIndex((name) =>
    targets.some((target) => target.stage === name && !FINISHED.has(target.progress)),
  );
  return { failure, index, currentStage: index < 0 ? undefined : names[index] };
}

/** One look at a run: how each target stands and what to change next. */
export function progressOf(input: ProgressInput): RunProgress {
  const { spec, looks, nowMs } = input;
  const names = stageNames(spec);
  const now = rfc3339(nowMs);
  const lookOf = (target: RolloutTarget): TargetLook => looks.get(target.name) ?? { gone: true };
  let targets = input.targets.map((target) => advanced(target, lookOf(target), spec, nowMs));
  let at = standing(targets, names);
  let findings: readonly PreflightFinding[] | undefined;
  const result = (changes: readonly TargetChange[], waitingFor: string): RunProgress => ({
    targets,
    stages: stageCounts(names, targets),
    ...(at.currentStage !== undefined ? { currentStage: at.currentStage } : {}),
    changes,
    ...(at.failure ? { failure: at.failure } : {}),
    complete: at.index < 0,
    waitingFor,
    ...(findings ? { preflight: findings } : {}),
  });
  if (at.failure) return result([], `a person: Cluster ${at.failure.name} failed (${at.failure.message})`);
  if (at.currentStage === undefined) return result([], "");
  if (input.held) return result([], input.held);
  if (!input.changing) return result([], "spec.paused to be false");

  const stage = at.currentStage;
  if (!targets.some((target) => target.stage === stage && STARTED.has(target.progress))) {
    const closed = gateClosed(input, targets, names, at.index);
    if (closed) return result([], closed);
  }
  // Asked already (by an engine that died before recording it, or by someone else): changing with no write, and
  // looked at at once (it may be Ready, or failed, already).
  targets = targets.map((target) => {
    const look = lookOf(target);
    return target.stage === stage && target.progress === "pending" && !look.gone && look.asked
      ? advanced({ ...target, progress: "changing", changedAt: now }, look, spec, nowMs)
      : target;
  });
  at = standing(targets, names);
  if (at.failure) return result([], `a person: Cluster ${at.failure.name} failed (${at.failure.message})`);
  // The stage finished with what was asked already: the next one's gates are the next look's.
  if (at.currentStage !== stage)
    return result([], at.currentStage ? `stage ${at.currentStage} to start` : "");

  // Preflight: every Cluster of the stage still to ask is checked; one blocking finding holds the whole stage.
  const check = input.preflight;
  const toAsk = targets.filter(
    (target) => target.stage === stage && target.progress === "pending" && !lookOf(target).gone,
  );
  // With none left to ask, the stage's last verdict stands (what was checked before its Clusters were asked).
  if (check && toAsk.length > 0) {
    findings = toAsk.flatMap((target) => check(target));
    const blocks = blocking(findings);
    if (blocks.length > 0)
      return result([], `stage ${stage}: preflight: ${blocks.map((finding) => finding.message).join("; ")}`);
  }

  const unavailable = targets.filter((target) => {
    const look = lookOf(target);
    if (look.gone || target.progress === "skipped") return false;
    return target.progress === "changing" || !look.ready;
  }).length;
  let budget = Math.max(0, (spec.maxUnavailable ?? ROLLOUT_DEFAULTS.maxUnavailable) - unavailable);
  // Until one target is Ready at the version, no more than `canary` are changing at once: a canary deleted before
  // it proved the version is replaced by the next target, never by a whole stage.
  const canary = spec.canary ?? ROLLOUT_DEFAULTS.canary;
  if (canary > 0 && !targets.some((target) => target.progress === "done")) {
    const changing = targets.filter((target) => target.progress === "changing").length;
    budget = Math.min(budget, Math.max(0, canary - changing));
  }
  const changes: TargetChange[] = [];
  for (const target of targets) {
    if (changes.length >= budget) break;
    const look = lookOf(target);
    if (target.stage !== stage || target.progress !== "pending" || look.gone) continue;
    changes.push({
      name: target.name,
      uid: target.uid,
      resourceVersion: look.resourceVersion,
      generation: look.generation,
    });
  }
  const pending = targets.filter((target) => target.stage === stage && target.progress === "pending").length;
  const waitingFor =
    changes.length > 0
      ? `stage ${stage}: asking ${changes.length} Cluster(s) for ${input.what ?? whatOf(spec)}`
      : pending > 0
        ? `stage ${stage}: fewer than maxUnavailable targets changing or not Ready (${unavailable} now)`
        : `stage ${stage}: its Clusters to be Ready at ${input.what ?? whatOf(spec)}`;
  return result(changes, waitingFor);
}
