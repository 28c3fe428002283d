/**
 * Constants of the engine's Cluster API infrastructure kinds (EngineCluster, its template, ClusterEndpoint) and
 * of the EngineControlPlane: the owner label and finalizer of an EngineCluster, their CEL messages.
 */

import { INFRASTRUCTURE_GROUP } from "../constants.ts";

/** Labels on what is published for an EngineCluster. */
export const ENGINE_CLUSTER_LABELS = {
  /** On the kubeconfig Secret and ClusterEndpoint published for an EngineCluster: its UID (their owner). */
  engineClusterUid: `${INFRASTRUCTURE_GROUP}/enginecluster-uid`,
} as const;

/** Finalizers on an EngineCluster. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const ENGINE_CLUSTER_FINALIZERS = {
  /** Ours on EngineClusters: the backend may still hold the cluster, its kubeconfig and endpoint are published. */
  engineCluster: `${INFRASTRUCTURE_GROUP}/enginecluster`,
} as const;

/** Messages of the CEL rules of the EngineCluster and EngineClusterTemplate CRDs, exactly as the API server reports them. */
export const ENGINE_CLUSTER_VALIDATION_MESSAGES = {
  /** EngineCluster: the endpoint Cluster API reads never changes once set (the contract). */
  controlPlaneEndpointImmutable: "controlPlaneEndpoint is immutable once set",
  /** EngineClusterTemplate: ClusterClasses roll out a new template instead of editing one. */
  templateImmutable: "spec.template is immutable",
} as const;
