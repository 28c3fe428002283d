/** The Cluster kind (clusters.openmcp.cloud/v1alpha1): one Kubernetes cluster, made from a ClusterProfile. */

import type { CommonStatus, JsonObject, LocalObjectReference, TypedObject } from "./common.ts";
import type { ENDPOINTS, TENANCIES } from "./constants/cluster.ts";
import type { CLUSTER_PHASES, CLUSTERS_API_VERSION } from "./constants.ts";

/** Whether a cluster serves one ClusterRequest (`Exclusive`) or several (`Shared`). */
export type Tenancy = (typeof TENANCIES)[number];

/** A phase the engine writes to a Cluster's status. */
export type ClusterPhase = (typeof CLUSTER_PHASES)[keyof typeof CLUSTER_PHASES];

/** A well-known endpoint name; other names may appear in objects written by other providers. */
export type EndpointName = (typeof ENDPOINTS)[keyof typeof ENDPOINTS];

/** Kubernetes settings of a cluster. */
export interface KubernetesSettings {
  /** Desired version, full (`1.32.8`) or partial (`1.32`); absent lets the provider choose. */
  readonly version?: string;
}

/** What a cluster should look like. */
export interface ClusterSpec {
  /** Name of the ClusterProfile the cluster is made from; immutable. */
  readonly profile: string;
  /** Kubernetes settings. */
  readonly kubernetes?: KubernetesSettings;
  /** What the cluster is meant for; at least one entry when present. */
  readonly purposes?: readonly string[];
  /** Exclusive or Shared. */
  readonly tenancy: Tenancy;
  /** Provider-specific configuration objects in the Cluster's namespace. */
  readonly clusterConfigs?: readonly LocalObjectReference[];
}

/** One address of a cluster's API server. */
export interface ClusterEndpoint {
  /** `apiserver-external` or `apiserver-internal` (see {@link EndpointName}). */
  readonly name: string;
  /** URL of the endpoint. */
  readonly url: string;
}

/** What the provider last observed about a cluster. Never holds a kubeconfig. */
export interface ClusterStatus extends CommonStatus {
  /** API server addresses, one per name. */
  readonly endpoints?: readonly ClusterEndpoint[];
  /** Deprecated copy of the external endpoint's URL. */
  readonly apiServer?: string;
  /** Free-form data only the responsible provider reads. */
  readonly providerStatus?: JsonObject;
}

/** A Kubernetes cluster managed by the provider that owns its profile. */
export interface Cluster extends TypedObject<typeof CLUSTERS_API_VERSION, "Cluster"> {
  /** Desired state. */
  readonly spec: ClusterSpec;
  /** Observed state; absent until the provider first writes it. */
  readonly status?: ClusterStatus;
}
