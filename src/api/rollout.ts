/**
 * The Rollout kind (engine.openmcp.cloud/v1alpha1): a Kubernetes version, a ProviderConfig's new settings, or both,
 * brought to a frozen set of Clusters in stages.
 */

import type { ClusterSelection } from "./cluster-selection.ts";
import type { SnapshotStorage } from "./cluster-snapshot.ts";
import type { JsonObject, StoredStateStatus, TypedObject } from "./common.ts";
import type { ROLLOUT_API_VERSION } from "./constants/rollout.ts";
import type { LabelSelector } from "./scheduler-config.ts";

/** One stage: a share of the frozen set, or the Clusters with these labels (exactly one of the two). */
export interface RolloutStage {
  readonly name: string;
  /** Percent (1–100) of the frozen set, taken in name order from the targets no earlier stage holds. */
  readonly share?: number;
  /** The targets no earlier stage holds whose labels match (at the freeze). */
  readonly selector?: LabelSelector;
}

/** Gates between stages. */
export interface RolloutGates {
  /** Each stage's Clusters Ready at the new version this long before the next stage starts. Default 0. */
  readonly readyForSeconds?: number;
  /** Each stage starts only once the annotation `engine.openmcp.cloud/approve-stage` names it or a later one. */
  readonly approval?: boolean;
  /** The run starts (and freezes its targets) no earlier than this (RFC 3339). */
  readonly notBefore?: string;
}

/** Checks of each Cluster before its stage asks it for the version (see docs/rollouts.md). */
export interface RolloutPreflight {
  /**
   * A Cluster whose API server could not be read for deprecated APIs (its backend gives no admin access, or the
   * read failed) blocks its stage when true; when false (the default) it is only named in the Preflight condition.
   */
  readonly requireDeprecatedAPICheck?: boolean;
}

/** ClusterSnapshots the run takes of each Cluster before its stage asks it for the version (see docs/rollouts.md). */
export interface RolloutSnapshots {
  /** Each target's stage waits, before asking it, for a Complete ClusterSnapshot of it taken by this run. */
  readonly beforeChange?: boolean;
  /** Where they go: as a ClusterSnapshot's `spec.storage` (absent: the engine's snapshot folder). */
  readonly storage?: SnapshotStorage;
}

/**
 * New settings of one ProviderConfig, brought to its Clusters stage by stage: a JSON merge patch (RFC 7386: a key
 * set replaces, `null` removes) over the config's `spec.settings`. A Cluster the run reached gets the patched
 * settings; the others keep the config's; the config itself gets them when the last stage is done.
 */
export interface RolloutSettings {
  /** The ProviderConfig (cluster-scoped) whose Clusters are the targets and whose settings change. */
  readonly providerConfig: string;
  /** Merged over `spec.settings` of the ProviderConfig. */
  readonly patch: JsonObject;
}

/** Which Clusters (of the rollout's namespace), what they get and how. */
export interface RolloutSpec extends ClusterSelection {
  /**
   * The Kubernetes version every target gets (written to the Cluster's `spec.kubernetes.version`); absent for a
   * settings-only run (the CRD asks for at least one of version and settings).
   */
  readonly version?: string;
  /** A ProviderConfig's new settings: only Clusters of that config are targets. */
  readonly settings?: RolloutSettings;
  /** In order; absent or empty: one stage `all`. Targets no stage takes join the last one. */
  readonly stages?: readonly RolloutStage[];
  /** How many targets are changed first and alone, as the stage `canary`. Default 1. */
  readonly canary?: number;
  /** At most this many targets changing or not Ready at once. Default 1. */
  readonly maxUnavailable?: number;
  readonly gates?: RolloutGates;
  readonly preflight?: RolloutPreflight;
  /** A snapshot of each Cluster before it is changed (a point to roll back to). */
  readonly snapshots?: RolloutSnapshots;
  /** How long a changed Cluster may take to be Ready at the new version; past it the run halts. Default 1800. */
  readonly timeoutSeconds?: number;
  /** No Cluster is changed while true; those changing go on. */
  readonly paused?: boolean;
  /** Stops the run for good (the CRD refuses setting it back to false). */
  readonly abort?: boolean;
}

/** Where one target is. */
export type TargetProgress = "pending" | "changing" | "done" | "failed" | "skipped";

/** One Cluster of the frozen set. */
export interface RolloutTarget {
  readonly name: string;
  readonly uid: string;
  readonly stage: string;
  readonly progress: TargetProgress;
  /** When this run asked it for the new version (RFC 3339). */
  readonly changedAt?: string;
  /** When it was first seen Ready at the new version (RFC 3339). */
  readonly doneAt?: string;
  /** Why it failed or was skipped. */
  readonly message?: string;
  /** A settings run: the hash of the settings its Cluster last said it runs (never the values). */
  readonly settingsHash?: string;
}

/** What a settings run changes, by hash (never the values, which may be sensitive). */
export interface RolloutSettingsStatus {
  readonly providerConfig: string;
  /** Hash of the config's `spec.settings` when the run started: what Clusters not reached yet keep. */
  readonly from: string;
  /** Hash of the settings the run brings (the patch over the config's settings). */
  readonly to: string;
  /** When the last stage was done and the config was given the new settings (RFC 3339). */
  readonly appliedAt?: string;
}

/** One stage's progress, counted over its targets. */
export interface StageProgress {
  readonly name: string;
  readonly targets: number;
  readonly done: number;
  readonly changing: number;
  readonly failed: number;
  readonly skipped: number;
}

/**
 * What the run has done. Its phases: Pending, Progressing, Paused, Halted, Succeeded, Aborted; its condition: `Ready`
 * (the run's verdict) with a reason and a message naming what it waits for or what failed.
 */
export interface RolloutStatus extends StoredStateStatus {
  /** The stage being worked on (absent before the start and after the end). */
  readonly currentStage?: string;
  /** The stages in order with their counts. */
  readonly stages?: readonly StageProgress[];
  /** The frozen set, each Cluster with its stage and progress; absent until the run starts. */
  readonly targets?: readonly RolloutTarget[];
  /** A settings run: from and to by hash, and when the config got them. */
  readonly settings?: RolloutSettingsStatus;
}

/** A rollout: namespaced, it changes Clusters of its own namespace. */
export interface Rollout extends TypedObject<typeof ROLLOUT_API_VERSION, "Rollout"> {
  readonly spec: RolloutSpec;
  readonly status?: RolloutStatus;
}
