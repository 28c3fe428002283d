/**
 * The engine's Cluster API infrastructure kinds (infrastructure.engine.openmcp.cloud/v1alpha1):
 * `EngineCluster`, the InfraCluster a CAPI `Cluster` points its `spec.infrastructureRef` at; its
 * template for ClusterClasses; and `ClusterEndpoint`, the endpoint as its own object in the shape of
 * Cluster API's "Flexible Managed Kubernetes Endpoints" proposal (not an upstream API).
 */
import type { ApiEndpoint } from "./cluster-api.ts";
import type { ObjectMeta, StoredStateStatus, TypedObject } from "./common.ts";
import type { INFRASTRUCTURE_API_VERSION } from "./constants.ts";

/** What a CAPI user asks of the infrastructure. */
export interface EngineClusterSpec {
  /** The ClusterProfile (as for openMCP Clusters) whose backend and ProviderConfig build the cluster; immutable. */
  readonly profile: string;
  /** Kubernetes settings; absent version: the ProviderConfig's default, else the newest offered. */
  readonly kubernetes?: { readonly version?: string };
  /** Set by the engine once the backend reports the API server; never changed afterwards (the contract). */
  readonly controlPlaneEndpoint?: ApiEndpoint;
}

/** A failure domain as the v1beta2 contract lists it. */
export interface FailureDomain {
  readonly name: string;
  readonly controlPlane?: boolean;
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * What the engine reports, in the contract's shape plus the machine's own fields. Its phases: Provisioning,
 * Provisioned, Failed, Deleting, Pending, Paused.
 */
export interface EngineClusterStatus extends StoredStateStatus {
  /** v1beta2: the infrastructure is provisioned (CAPI's InfrastructureReady). */
  readonly initialization?: { readonly provisioned?: boolean };
  /** v1beta1 spelling of the same signal, still read by older CAPI releases. */
  readonly ready?: boolean;
  readonly failureDomains?: readonly FailureDomain[];
  /** The Kubernetes version the backend runs. */
  readonly version?: string;
}

/** An infrastructure cluster of Cluster API, built by one of the engine's backends. */
export interface EngineCluster extends TypedObject<typeof INFRASTRUCTURE_API_VERSION, "EngineCluster"> {
  readonly spec: EngineClusterSpec;
  readonly status?: EngineClusterStatus;
}

/** The proposal's endpoint types; the engine writes `apiserver` (the type definition's enum). */
export type ClusterEndpointType = "apiserver" | "ExternalControlPlaneEndpoint";

/** A reachable API endpoint of one CAPI Cluster, owned by the EngineCluster it came from. */
export interface ClusterEndpointObject
  extends TypedObject<typeof INFRASTRUCTURE_API_VERSION, "ClusterEndpoint"> {
  readonly metadata: ObjectMeta;
  readonly spec: ApiEndpoint & { readonly cluster: string; readonly type: ClusterEndpointType };
}
