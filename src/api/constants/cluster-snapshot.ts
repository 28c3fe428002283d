/** Constants of the ClusterSnapshot kind (engine.openmcp.cloud/v1alpha1): its resource, annotation, conditions and reasons. */
import { ENGINE_API_VERSION, engineResource } from "../constants.ts";

/** The kind's name. */
export const CLUSTER_SNAPSHOT_KIND = "ClusterSnapshot";

/** `apiVersion` of a ClusterSnapshot (the engine's own group). */
export const CLUSTER_SNAPSHOT_API_VERSION = ENGINE_API_VERSION;

/** Where ClusterSnapshots are served: namespaced, each of a Cluster of its own namespace. */
export const CLUSTER_SNAPSHOT_RESOURCE = engineResource("clustersnapshots", true);

/**
 * On a Complete ClusterSnapshot: roll its Cluster back to it, once per value (any value; a new one asks again).
 * `status.lastRestore.request` records the value last acted on.
 */
export const RESTORE_ANNOTATION = "engine.openmcp.cloud/restore";

/**
 * On a new Cluster: make it from this ClusterSnapshot (a name in the Cluster's namespace) instead of empty — a clone
 * of the snapshot's Cluster as it was, with an endpoint of its own. Read when the Cluster is created only.
 */
export const RESTORE_FROM_ANNOTATION = "engine.openmcp.cloud/restore-from";

/**
 * On each ClusterSnapshot the engine makes (a schedule's, a rollout's): the name of the Cluster it is of, to select them
 * by (a schedule's retention counts per Cluster).
 */
export const SNAPSHOT_CLUSTER_LABEL = "engine.openmcp.cloud/snapshot-cluster";

/**
 * The condition saying whether the snapshot is taken, the one saying how the last restore went, and the one saying
 * why a deleted snapshot's data is still in its store (only while it is being deleted).
 */
export const SNAPSHOT_CONDITIONS = { ready: "Ready", restored: "Restored", removed: "Removed" } as const;

/** Reasons of the snapshot's conditions and Events. */
export const CLUSTER_SNAPSHOT_REASONS = {
  /** Ready: the snapshot is complete in its storage (size and checksum in the status). */
  Taken: "Taken",
  /** Ready=False: the snapshot is being taken. */
  Taking: "Taking",
  /** Ready=False: the Cluster exists but is not Ready yet; the snapshot waits for it. */
  ClusterNotReady: "ClusterNotReady",
  /** Ready=False, Failed: no Cluster of that name in the snapshot's namespace. */
  ClusterNotFound: "ClusterNotFound",
  /** Ready=False, Failed: the Cluster's backend cannot take snapshots (e.g. `existing`). */
  SnapshotsUnsupported: "SnapshotsUnsupported",
  /** Ready=False while the backend fails to take it (retried with backoff). */
  SnapshotFailed: "SnapshotFailed",
  /** Restored=True: the Cluster was rolled back to this snapshot. */
  Restored: "Restored",
  /** Restored=False while a restore is under way. */
  Restoring: "Restoring",
  /** Restored=False while the backend fails to restore (retried with backoff). */
  RestoreFailed: "RestoreFailed",
  /** Ready or Restored False (retried): the object store refused the credentials (names the endpoint and bucket). */
  StorageAccessDenied: "StorageAccessDenied",
  /** Ready or Restored False (retried): the object store has no such bucket. */
  StorageBucketMissing: "StorageBucketMissing",
  /** Ready or Restored False (retried): the object store does not answer. */
  StorageUnreachable: "StorageUnreachable",
  /** Ready or Restored False (retried): the Secret with the object store's credentials, or a key of it, is missing. */
  CredentialsNotFound: "CredentialsNotFound",
  /** Removed=False: deleted; its data is being removed from the store. */
  Removing: "Removing",
  /** Removed=False, and the Event `DeletionHeld`: deleted, but a Cluster is being made from it; its data stays until then. */
  InUse: "InUse",
  /** Removed=False while removing its data fails otherwise (retried). */
  RemoveFailed: "RemoveFailed",
} as const;
