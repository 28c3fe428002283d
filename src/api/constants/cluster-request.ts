/** Constants of the ClusterRequest kind and its scheduler: labels, annotations, finalizers, conditions, reasons. */

import { CLUSTERS_GROUP, ENGINE_GROUP } from "../constants.ts";

/** Labels on ClusterRequests, and the scheduler's on the Clusters it makes. */
export const CLUSTER_REQUEST_LABELS = {
  /** Set by the scheduler on Clusters it may delete once no request references them. */
  deleteWithoutRequests: `${CLUSTERS_GROUP}/delete-without-requests`,
  /** Set on ClusterRequests whose Cluster gets a random name. */
  randomizeClusterName: `${CLUSTERS_GROUP}/randomize-cluster-name`,
} as const;

/** Prefix of labels and annotations copied from a ClusterRequest to its Exclusive Cluster. */
export const COPIED_METADATA_PREFIX = "metadata.open-control-plane.io/";

/** Annotations on a ClusterRequest. */
export const CLUSTER_REQUEST_ANNOTATIONS = {
  /** On a ClusterRequest: `"true"` or `"false"` overrides what its purposes say about a cluster of its own. */
  dedicated: `${ENGINE_GROUP}/dedicated`,
  /** On a ClusterRequest: the name prefix it proposes for its objects on a shared Cluster. */
  prefix: `${ENGINE_GROUP}/prefix`,
  /** On a ClusterRequest: further purposes (comma-separated) after `spec.purpose`, for Purpose aggregation. */
  purposes: `${ENGINE_GROUP}/purposes`,
  /**
   * On a ClusterRequest: this engine's scheduler took it on (written with its finalizer, before any
   * `status.cluster`); a request granted without it was granted by another scheduler and is left alone.
   */
  scheduler: `${ENGINE_GROUP}/scheduler`,
} as const;

/**
 * Prefix of the annotations on a shared Cluster that claim a name prefix for one request
 * (`prefix.engine.openmcp.cloud/<ClusterRequest UID>: <prefix>`); written together with the request's
 * finalizer, so two requests can never claim colliding prefixes on one Cluster.
 */
export const PREFIX_CLAIM_ANNOTATION_PREFIX = `prefix.${ENGINE_GROUP}/`;

/** The scheduler's finalizers. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const CLUSTER_REQUEST_FINALIZERS = {
  /** The scheduler's finalizer on ClusterRequests. */
  request: `${CLUSTERS_GROUP}/request`,
  /** Prefix of the scheduler's per-request finalizers on Clusters (`…/<ClusterRequest UID>`). */
  requestOnClusterPrefix: `request.${CLUSTERS_GROUP}/`,
} as const;

/** Condition types of a ClusterRequest. */
export const CLUSTER_REQUEST_CONDITION_TYPES = {
  /** A ClusterRequest has its Cluster: finalizer, prefix claim and grant in place. */
  clusterGranted: "ClusterGranted",
  /** A shared ClusterRequest that proposes a prefix: whether it got it, and if not why. */
  proposedPrefix: "ProposedPrefix",
} as const;

/** Reasons of a ClusterRequest's conditions and Events beyond the shared ones. */
export const CLUSTER_REQUEST_REASONS = {
  /** ClusterRequest: the Cluster its name calls for serves another live request, or does not fit. */
  ClusterConflict: "ClusterConflict",
  /** ClusterRequest: no ClusterProfile offers a required trait. */
  MissingTrait: "MissingTrait",
  /** ClusterRequest: its scheduling annotations cannot be read. */
  InvalidRequest: "InvalidRequest",
  /** ClusterRequest: a Cluster is being created or claimed for it. */
  Scheduling: "Scheduling",
  /** ClusterRequest: its Cluster is being deleted by someone; it is let go and made again. */
  Replacing: "Replacing",
  /** ClusterRequest: a Cluster of the name it needs is still being deleted. */
  WaitingForCluster: "WaitingForCluster",
  /** ClusterRequest: the prefix it proposes was granted. */
  PrefixAsProposed: "PrefixAsProposed",
  /** ClusterRequest: the prefix it proposes is not usable as a prefix; another was granted. */
  InvalidPrefix: "InvalidPrefix",
  /** ClusterRequest: the prefix it proposes collides with one another request holds on the Cluster. */
  PrefixTaken: "PrefixTaken",
  /** ClusterRequest: it proposes a prefix, but its Cluster is its own (Exclusive), where no prefix is granted. */
  PrefixNotUsed: "PrefixNotUsed",
  /** ClusterRequest: it proposes a prefix other than the one it was granted earlier (grants do not change). */
  PrefixAlreadyGranted: "PrefixAlreadyGranted",
  /** ClusterRequest with waitForClusterDeletion: waiting for its Cluster to be gone. */
  WaitingForClusterDeletion: "WaitingForClusterDeletion",
} as const;

/** Messages of the CEL rules of the ClusterRequest CRD, exactly as the API server reports them (upstream's). */
export const CLUSTER_REQUEST_VALIDATION_MESSAGES = {
  /** ClusterRequest: the whole spec may not change (upstream). */
  clusterRequestSpecImmutable: "spec is immutable",
  /** ClusterRequest: `status.cluster` may not change (upstream). */
  statusClusterImmutable: "cluster is immutable",
  /** ClusterRequest: `status.cluster` may not be removed (upstream). */
  statusClusterNotRemovable: "cluster may not be removed once set",
} as const;
