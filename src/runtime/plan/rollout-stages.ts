/**
 * What a planned Rollout would do over its whole run, stage by stage: which Clusters, in which order (the canary
 * first) and what each would get. Made from the Rollout machine's own pure parts (`freezeTargets`, `stageNames`,
 * `lookAt`) and the write its kind makes (`changeOperations`) over the Clusters its step saw, so it cannot drift from
 * the run: a plan's step shows only the run's first look (the canary asked); this shows the rest. Pure.
 */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import type { Rollout, TargetProgress } from "../../api/rollout.ts";
import { whatOf } from "../../machines/rollout/progress.ts";
import { mergeSettings, runName, settingsHash } from "../../machines/rollout/settings.ts";
import { freezeTargets, lookAt, stageNames } from "../../machines/rollout/targets.ts";
import type { PatchOperation } from "../../machines/shared/json-patch.ts";
import { changeOperations } from "../kinds/rollout/kind.ts";

/** One Cluster of a planned run. */
export interface PlannedRolloutTarget {
  readonly name: string;
  /** Its `spec.kubernetes.version` now (absent: it names none, its provider chose). */
  readonly from?: string;
  /** What the run brings: its version, its ProviderConfig's new settings, or both. */
  readonly to: string;
  /** A settings run: the hash of the settings the Cluster runs now, and of those it would get (never the values). */
  readonly settings?: { readonly from?: string; readonly to?: string };
  /** As the run recorded it; `pending` for a run not started yet. */
  readonly progress: TargetProgress;
  /**
   * The write the run would make to it when its turn comes (its version and the run's annotation); empty when it
   * would not be written: asked already, finished, gone, or the run is over.
   */
  readonly writes: readonly PatchOperation[];
}

/** One stage of a planned run, its Clusters in the order the run asks them. */
export interface PlannedRolloutStage {
  readonly name: string;
  readonly targets: readonly PlannedRolloutTarget[];
}

/** A Rollout's whole run as a plan sees it. */
export interface PlannedRollout {
  /** What the run brings, in words. */
  readonly version: string;
  /** `recorded`: the run started and froze its targets already; `now`: the targets the start would freeze now. */
  readonly frozen: "recorded" | "now";
  /** The stages in the order they run (the canary first). */
  readonly stages: readonly PlannedRolloutStage[];
}

/** Phases after which a run changes nothing more. */
const OVER: ReadonlySet<string> = new Set(["Halted", "Succeeded", "Aborted"]);

/**
 * The stages of `rollout`'s run over `clusters` (those of its namespace, as its step saw them), the profiles and,
 * for a settings run, its ProviderConfig.
 */
export function rolloutStages(
  rollout: Rollout,
  clusters: readonly Cluster[],
  profiles: readonly ClusterProfile[] = [],
  providerConfig?: ProviderConfig,
): PlannedRollout {
  const { spec } = rollout;
  const namespace = rollout.metadata.namespace ?? "";
  const recorded = rollout.status?.targets;
  const targets = recorded ?? freezeTargets(spec, namespace, clusters, profiles);
  const toHash =
    spec.settings && providerConfig
      ? settingsHash(mergeSettings(providerConfig.spec.settings, spec.settings.patch))
      : undefined;
  const byName = new Map(
    clusters
      .filter((cluster) => cluster.metadata.namespace === namespace)
      .map((cluster) => [cluster.metadata.name ?? "", cluster]),
  );
  const over = OVER.has(rollout.status?.phase ?? "") || spec.abort === true;
  const changedBy = runName(rollout);
  const planned = (target: (typeof targets)[number]): PlannedRolloutTarget => {
    const cluster = byName.get(target.name);
    const look = lookAt(target, cluster, {
      ...(spec.version !== undefined ? { version: spec.version } : {}),
      ...(spec.settings ? { settingsRun: changedBy } : {}),
      ...(toHash ? { settingsHash: toHash } : {}),
    });
    // Asked when its turn comes: still pending, there (the same uid), not asking for the version already.
    const asked = !over && target.progress === "pending" && !look.gone && !look.asked;
    const from = cluster?.spec?.kubernetes?.version;
    const runs = cluster?.status?.providerStatus?.settingsHash;
    return {
      name: target.name,
      ...(from ? { from } : {}),
      to: whatOf(spec),
      ...(spec.settings
        ? {
            settings: {
              ...(typeof runs === "string" ? { from: runs } : {}),
              ...(toHash ? { to: toHash } : {}),
            },
          }
        : {}),
      progress: target.progress,
      writes:
        asked && cluster
          ? changeOperations(cluster, spec.version, changedBy, spec.settings !== undefined)
          : [],
    };
  };
  return {
    version: whatOf(spec),
    frozen: recorded ? "recorded" : "now",
    stages: stageNames(spec).map((name) => ({
      name,
      targets: targets.filter((target) => target.stage === name).map(planned),
    })),
  };
}
