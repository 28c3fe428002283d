/**
 * A rollout's frozen target set and how each target stands: the freeze (which Clusters, in which stage) and what
 * one Cluster shows about the new version. Pure: the Clusters are given, time is given.
 */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import { CLUSTER_CONDITION_TYPES } from "../../api/constants/cluster.ts";
import {
  CANARY_STAGE,
  DEFAULT_STAGE,
  ROLLOUT_DEFAULTS,
  SETTINGS_FROM_ROLLOUT_ANNOTATION,
} from "../../api/constants/rollout.ts";
import { CONDITION_TYPES } from "../../api/constants.ts";
import type { RolloutSpec, RolloutTarget } from "../../api/rollout.ts";
import { selectedClusters } from "../shared/cluster-selection.ts";
import { selectorMatches } from "../shared/label-selector.ts";

/** The stage names of a run, in order: the canary (when it has one), then the spec's (or `all`). */
export function stageNames(spec: RolloutSpec): string[] {
  const own = (spec.stages ?? []).map((stage) => stage.name);
  const canary = spec.canary ?? ROLLOUT_DEFAULTS.canary;
  return [...(canary > 0 ? [CANARY_STAGE] : []), ...(own.length > 0 ? own : [DEFAULT_STAGE])];
}

/**
 * The Clusters a settings run may reach: those whose ClusterProfile is made from its ProviderConfig (every one for a
 * version run).
 */
export function ofSettingsConfig(
  spec: RolloutSpec,
  clusters: readonly Cluster[],
  profiles: readonly ClusterProfile[],
): readonly Cluster[] {
  const config = spec.settings?.providerConfig;
  if (config === undefined) return clusters;
  const profilesOfConfig = new Set(
    profiles
      .filter((profile) => profile.spec.providerConfigRef.name === config)
      .map((profile) => profile.metadata.name),
  );
  return clusters.filter((cluster) => profilesOfConfig.has(cluster.spec.profile));
}

/**
 * The frozen set: the Clusters the rollout selects now (of its ProviderConfig, for a settings run), by name, each
 * placed in its stage. The first `canary`
 * names form the canary; then each stage takes, from the names no earlier stage holds, those its selector
 * matches or its share of the whole set (rounded up, at least one); names no stage took join the last stage.
 */
export function freezeTargets(
  spec: RolloutSpec,
  namespace: string,
  clusters: readonly Cluster[],
  profiles: readonly ClusterProfile[],
): RolloutTarget[] {
  const selected = selectedClusters(spec, namespace, ofSettingsConfig(spec, clusters, profiles));
  const total = selected.length;
  const stageOf = new Map<string, string>();
  let rest = selected;
  const take = (stage: string, taken: readonly Cluster[]) => {
    for (const cluster of taken) stageOf.set(cluster.metadata.name ?? "", stage);
    rest = rest.filter((cluster) => !taken.includes(cluster));
  };
  take(CANARY_STAGE, rest.slice(0, spec.canary ?? ROLLOUT_DEFAULTS.canary));
  const stages = spec.stages?.length ? spec.stages : [{ name: DEFAULT_STAGE, share: 100 }];
  for (const stage of stages) {
    if (stage.selector)
      take(
        stage.name,
        rest.filter((c) => selectorMatches(stage.selector, c.metadata.labels)),
      );
    else take(stage.name, rest.slice(0, Math.max(1, Math.ceil(((stage.share ?? 100) * total) / 100))));
  }
  take(stages[stages.length - 1]?.name ?? DEFAULT_STAGE, rest);
  return selected.map((cluster) => ({
    name: cluster.metadata.name ?? "",
    uid: cluster.metadata.uid ?? "",
    stage: stageOf.get(cluster.metadata.name ?? "") ?? DEFAULT_STAGE,
    progress: "pending",
  }));
}

/** What one target's Cluster shows now, as far as the run cares. */
export type TargetLook =
  | { readonly gone: true }
  | {
      readonly gone: false;
      /** Its spec asks for the run's version, and it names the settings run (each of the two the run brings). */
      readonly asked: boolean;
      /** Ready, at its current generation (so at what its spec asks for). */
      readonly ready: boolean;
      /** Ready and, for a settings run, running its settings (by hash): what the run calls done. */
      readonly settled: boolean;
      /** A settings run: the hash of the settings it says it runs. */
      readonly settingsHash?: string;
      /** The Cluster machine, having seen its current spec, says failed: why. */
      readonly failed?: string;
      /** Its resourceVersion, to guard the write of the new version. */
      readonly resourceVersion: string;
      /** Its generation: the spec the run decided on. */
      readonly generation: number;
    };

/** What a run brings a Cluster: a version, settings (by the run's name and their hash), or both. */
export interface Wanted {
  readonly version?: string;
  /** `<name>/<uid>` of a settings run, as the Cluster's annotation names it. */
  readonly settingsRun?: string;
  /** Hash of the settings the run brings. */
  readonly settingsHash?: string;
}

/** How `target`'s Cluster stands (`cluster` is the one of its name, if any). */
export function lookAt(target: RolloutTarget, cluster: Cluster | undefined, wanted: Wanted): TargetLook {
  if (!cluster || cluster.metadata.uid !== target.uid || cluster.metadata.deletionTimestamp)
    return { gone: true };
  const seen = (cluster.status?.observedGeneration ?? 0) >= (cluster.metadata.generation ?? 0);
  const failed = seen && cluster.status?.providerStatus?.state === "failed";
  const problem = cluster.status?.conditions?.find(
    (c) =>
      c.status === "False" &&
      (c.type === CONDITION_TYPES.clusterReady || c.type === CLUSTER_CONDITION_TYPES.versionSupported),
  );
  const running = cluster.status?.providerStatus?.settingsHash;
  const runs = typeof running === "string" ? running : undefined;
  return {
    gone: false,
    asked:
      (wanted.version === undefined || cluster.spec?.kubernetes?.version === wanted.version) &&
      (wanted.settingsRun === undefined ||
        cluster.metadata.annotations?.[SETTINGS_FROM_ROLLOUT_ANNOTATION] === wanted.settingsRun),
    ready: seen && !failed && cluster.status?.phase === "Ready",
    settled:
      seen &&
      !failed &&
      cluster.status?.phase === "Ready" &&
      (wanted.settingsHash === undefined || runs === wanted.settingsHash),
    ...(wanted.settingsHash !== undefined && runs !== undefined ? { settingsHash: runs } : {}),
    ...(failed
      ? { failed: problem ? `${problem.reason}: ${problem.message}` : "the Cluster reports failed" }
      : {}),
    resourceVersion: cluster.metadata.resourceVersion ?? "",
    generation: cluster.metadata.generation ?? 0,
  };
}
