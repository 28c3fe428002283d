/** Constants of the Rollout kind (engine.openmcp.cloud/v1alpha1): its resource, annotations, defaults and reasons. */
import { ENGINE_API_VERSION, ENGINE_GROUP, engineResource } from "../constants.ts";

/** The kind's name. */
export const ROLLOUT_KIND = "Rollout";

/** `apiVersion` of a Rollout (the engine's own group, like HibernationSchedule). */
export const ROLLOUT_API_VERSION = ENGINE_API_VERSION;

/** Where Rollouts are served: namespaced, changing Clusters of their own namespace. */
export const ROLLOUT_RESOURCE = engineResource("rollouts", true);

/** On a Rollout: a person's approval of the stage it names (and of every stage before it), when `gates.approval`. */
export const APPROVE_STAGE_ANNOTATION = `${ENGINE_GROUP}/approve-stage`;

/** On a Cluster a rollout changed: `<rollout name>/<rollout uid>`, the run that changed its version. */
export const CHANGED_BY_ROLLOUT_ANNOTATION = `${ENGINE_GROUP}/changed-by-rollout`;

/**
 * On a Cluster a settings run reached: `<rollout name>/<rollout uid>`, the run whose settings it gets (the runtime
 * merges that run's patch over its ProviderConfig's settings until the run has given them to the config).
 */
export const SETTINGS_FROM_ROLLOUT_ANNOTATION = `${ENGINE_GROUP}/settings-from-rollout`;

/** The name of the canary stage, changed first and alone. */
export const CANARY_STAGE = "canary";

/** The name of the one stage of a rollout that lists none. */
export const DEFAULT_STAGE = "all";

/** The condition of the Rollout saying how the current stage's preflight stands. */
export const PREFLIGHT_CONDITION = "Preflight";

/** Defaults of the spec (the CRD sets them too; the step reads them for objects written without them). */
export const ROLLOUT_DEFAULTS = {
  canary: 1,
  maxUnavailable: 1,
  readyForSeconds: 0,
  /** How long a changed Cluster may take to be Ready at the new version before the run halts. */
  timeoutSeconds: 1_800,
} as const;

/** Reasons of the Rollout's conditions and Events. */
export const ROLLOUT_REASONS = {
  /** Waiting for `gates.notBefore`. */
  NotBefore: "NotBefore",
  /** Changing Clusters, or waiting between them (the message says for what). */
  Progressing: "Progressing",
  /** `spec.paused`: no Cluster is changed until it is false again. */
  Paused: "Paused",
  /** A target failed at the new version (the message names it and its failure). */
  TargetFailed: "TargetFailed",
  /** A target was not Ready at the new version within `spec.timeoutSeconds`. */
  TargetTimedOut: "TargetTimedOut",
  /** Every target is at the new version (or was deleted meanwhile). */
  Succeeded: "Succeeded",
  /** `spec.abort`: the run stopped for good. */
  Aborted: "Aborted",
  /** Event: Clusters were asked for the new version. */
  ClustersChanged: "ClustersChanged",
  /** Event: a stage was entered. */
  StageStarted: "StageStarted",
  /** Preflight: a target's profile does not offer the version (or the profile is missing). */
  VersionNotOffered: "VersionNotOffered",
  /** Preflight: the version is a downgrade, or more than one minor above what a target asks for now. */
  VersionSkew: "VersionSkew",
  /** Preflight (a note, never blocking): a target names no version, so the skew could not be checked. */
  VersionSkewNotChecked: "VersionSkewNotChecked",
  /** Preflight: a target's API server was asked for an API that the version no longer serves. */
  DeprecatedAPIsInUse: "DeprecatedAPIsInUse",
  /** Preflight: a target's API server could not be read (no admin access, or it failed); blocks only when required. */
  DeprecatedAPIsNotChecked: "DeprecatedAPIsNotChecked",
  /** Preflight (`snapshots.beforeChange`): a target's ClusterSnapshot of this run is missing (being made). */
  SnapshotMissing: "SnapshotMissing",
  /** Preflight (`snapshots.beforeChange`): a target's ClusterSnapshot of this run is not Complete yet. */
  SnapshotPending: "SnapshotPending",
  /** Preflight (`snapshots.beforeChange`): a target's ClusterSnapshot of this run failed; a person acts. */
  SnapshotFailed: "SnapshotFailed",
  /** Event: ClusterSnapshots of Clusters were made before their stage asks them. */
  SnapshotsCreated: "SnapshotsCreated",
  /** Settings run: its ProviderConfig does not exist (nothing is changed until it does). */
  ProviderConfigNotFound: "ProviderConfigNotFound",
  /** Settings run: the backend refuses the settings the patch makes (nothing is changed). */
  SettingsRefused: "SettingsRefused",
  /** Event: the last stage was done and the ProviderConfig was given the new settings. */
  SettingsApplied: "SettingsApplied",
  /** Preflight: every check passed for the current stage's Clusters still to ask. */
  PreflightPassed: "PreflightPassed",
} as const;

/** On each ClusterSnapshot a rollout made before changing a Cluster: the rollout's uid (of the run), and its name. */
export const ROLLOUT_SNAPSHOT_LABELS = {
  rolloutUid: "engine.openmcp.cloud/rollout-uid",
  rollout: "engine.openmcp.cloud/rollout",
} as const;
