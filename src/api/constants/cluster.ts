/** Constants of the Cluster kind: its labels, annotations, finalizer, tenancies, endpoints, conditions and reasons. */

import { CLUSTERS_GROUP, ENGINE_GROUP } from "../constants.ts";

/** Labels on a Cluster. */
export const CLUSTER_LABELS = {
  /** Actual Kubernetes version of a Cluster (shown as the Version column). */
  k8sVersion: `${CLUSTERS_GROUP}/k8sversion`,
  /**
   * `"true"` on a Cluster: deleting it is refused until it is annotated {@link CLUSTER_ANNOTATIONS.confirmDeletion}
   * (crds/policies/cluster-deletion-protection.yaml); a landscape's platform cluster carries it.
   */
  deletionProtection: `${ENGINE_GROUP}/deletion-protection`,
} as const;

/** Annotations on a Cluster. */
export const CLUSTER_ANNOTATIONS = {
  /** Free-text provider information, shown by `kubectl get clusters -o wide`. */
  providerInfo: `${CLUSTERS_GROUP}/providerinfo`,
  /** `"true"` on a Cluster labelled {@link CLUSTER_LABELS.deletionProtection}: the explicit step that lets it be deleted. */
  confirmDeletion: `${ENGINE_GROUP}/confirm-deletion`,
} as const;

/** Finalizers on a Cluster. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const CLUSTER_FINALIZERS = {
  /** Ours on Clusters: the backend may still hold infrastructure for this object. */
  cluster: `${ENGINE_GROUP}/cluster`,
} as const;

/** Values of `spec.tenancy` of a Cluster. */
export const TENANCIES = ["Exclusive", "Shared"] as const;

/** Names of `status.endpoints[]` entries of a Cluster. */
export const ENDPOINTS = { external: "apiserver-external", internal: "apiserver-internal" } as const;

/** Condition types of a Cluster beyond the shared ones. */
export const CLUSTER_CONDITION_TYPES = {
  /** The object is served by this provider (its profile resolved and is ours). */
  profileResolved: "ProfileResolved",
  /** The requested Kubernetes version is supported. */
  versionSupported: "VersionSupported",
  /** Deletion waits for nobody but us. */
  deletionUnblocked: "DeletionUnblocked",
} as const;

/** Reasons of a Cluster's conditions and Events beyond the shared ones. */
export const CLUSTER_REASONS = {
  /** The profile an object names is missing because the ProviderConfig that would publish it is not Ready. */
  ProviderConfigNotReady: "ProviderConfigNotReady",
  DeprecatedVersion: "DeprecatedVersion",
  /** A Cluster moved here by `openmcp-engine move`: the backend imports its state from the hand-over Secret. */
  TakingOver: "TakingOver",
  /** The backend reports the cluster incomplete; create is ordered again to make what is missing. */
  Repairing: "Repairing",
} as const;

/** Messages of the CEL rules of the Cluster CRD, exactly as the API server reports them. */
export const CLUSTER_VALIDATION_MESSAGES = {
  /** Cluster: `spec.profile` may not change (upstream). */
  profileImmutable: "profile is immutable",
} as const;
