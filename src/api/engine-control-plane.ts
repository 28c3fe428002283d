/**
 * The engine's Cluster API control-plane kinds (controlplane.engine.openmcp.cloud/v1alpha1):
 * `EngineControlPlane`, the ControlPlane a CAPI `Cluster` points its `spec.controlPlaneRef` at — a managed
 * control plane made by one of our backends, with no Machines — and its template for ClusterClasses. Beside
 * them, `EngineControlPlaneInfrastructure` (in our infrastructure group): an InfraCluster with nothing to
 * build, provisioned from the moment it exists, for Cluster API releases that need an InfraCluster to call
 * a Cluster Available.
 */
import type { ApiEndpoint } from "./cluster-api.ts";
import type { StoredStateStatus, TypedObject } from "./common.ts";
import { infrastructureResource, served } from "./constants.ts";

/** API group of the engine's control-plane kinds (as Cluster API keeps controlplane.* apart from infrastructure.*). */
export const CONTROLPLANE_GROUP = "controlplane.engine.openmcp.cloud";
/** The only served version of {@link CONTROLPLANE_GROUP}; it serves Cluster API's v1beta2 contract. */
export const CONTROLPLANE_VERSION = "v1alpha1";
/** `apiVersion` of the engine's control-plane kinds. */
export const CONTROLPLANE_API_VERSION = `${CONTROLPLANE_GROUP}/${CONTROLPLANE_VERSION}`;

const controlPlaneResource = served(CONTROLPLANE_GROUP, CONTROLPLANE_VERSION);

/** The resources of the control-plane side, as served by our CRDs. */
export const CONTROLPLANE_RESOURCES = {
  EngineControlPlane: controlPlaneResource("enginecontrolplanes", true),
  EngineControlPlaneTemplate: controlPlaneResource("enginecontrolplanetemplates", true),
  EngineControlPlaneInfrastructure: infrastructureResource("enginecontrolplaneinfrastructures", true),
  EngineControlPlaneInfrastructureTemplate: infrastructureResource(
    "enginecontrolplaneinfrastructuretemplates",
    true,
  ),
} as const;

/** Our finalizer on EngineControlPlanes: the backend's cluster is gone before it goes. */
export const ENGINE_CONTROL_PLANE_FINALIZER = `${CONTROLPLANE_GROUP}/enginecontrolplane`;

/** Labels and annotations the control-plane side writes on what it publishes. */
export const ENGINE_CONTROL_PLANE_LABELS = {
  /** On the kubeconfig Secret and the ClusterEndpoint: the uid of the EngineControlPlane they were made for. */
  uid: `${CONTROLPLANE_GROUP}/enginecontrolplane-uid`,
} as const;

export const ENGINE_CONTROL_PLANE_ANNOTATIONS = {
  /**
   * On the kubeconfig Secret: SHA-256 of the admin kubeconfig it holds, so a change of the backend's admin
   * credentials is seen without reading the Secret's data (and a hash is no secret).
   */
  kubeconfigSha256: `${CONTROLPLANE_GROUP}/kubeconfig-sha256`,
} as const;

/** What a Cluster API user asks of the control plane. */
export interface EngineControlPlaneSpec {
  /** The ClusterProfile (as for openMCP Clusters) whose backend and ProviderConfig build it; immutable. */
  readonly profile: string;
  /** The contract's desired Kubernetes version (`v1.33.2`, `1.33.2` or `1.33`); set by the topology for ClusterClasses. */
  readonly version: string;
  /** Set by the engine once the backend reports the API server; never changed afterwards (the contract). */
  readonly controlPlaneEndpoint?: ApiEndpoint;
}

/** One version the control plane runs, as the v1beta2 contract lists them. */
export interface ControlPlaneVersion {
  readonly version: string;
  readonly replicas?: number;
}

/**
 * What the engine reports, in the contract's shape plus the machine's own fields. Its phases: Pending, Provisioning,
 * Ready, Updating, Failed or Deleting.
 */
export interface EngineControlPlaneStatus extends StoredStateStatus {
  /** v1beta2: the control plane accepts requests (CAPI's ControlPlaneInitialized). Stays true once set. */
  readonly initialization?: { readonly controlPlaneInitialized?: boolean };
  /** v1beta1 spelling of the same signal. */
  readonly initialized?: boolean;
  /** v1beta1 readiness: the Available condition as a boolean. */
  readonly ready?: boolean;
  /** No Machines, no Nodes: the marker Cluster API reads for managed control planes. */
  readonly externalManagedControlPlane?: boolean;
  /** The Kubernetes version the control plane runs, `v`-prefixed (deprecated by the contract for `versions`). */
  readonly version?: string;
  readonly versions?: readonly ControlPlaneVersion[];
}

/** A managed control plane of Cluster API, built by one of the engine's backends. */
export interface EngineControlPlane
  extends TypedObject<typeof CONTROLPLANE_API_VERSION, "EngineControlPlane"> {
  readonly spec: EngineControlPlaneSpec;
  readonly status?: EngineControlPlaneStatus;
}

/** An EngineControlPlane's spec for ClusterClasses; the topology sets `version`. */
export interface EngineControlPlaneTemplate
  extends TypedObject<typeof CONTROLPLANE_API_VERSION, "EngineControlPlaneTemplate"> {
  readonly spec: {
    readonly template: {
      readonly metadata?: {
        readonly labels?: Readonly<Record<string, string>>;
        readonly annotations?: Readonly<Record<string, string>>;
      };
      readonly spec: Pick<EngineControlPlaneSpec, "profile">;
    };
  };
}

/** Condition types an EngineControlPlane shows (the contract's `Available` first). */
export const ENGINE_CONTROL_PLANE_CONDITIONS = {
  /** Mirrored by Cluster API into the Cluster's ControlPlaneAvailable. */
  available: "Available",
  ready: "Ready",
  /** The running version is the one spec.version asks for; False says why not (upgrading, refused). */
  upToDate: "UpToDate",
  /** An upgrade is under way; Cluster API reads it for the Cluster's RollingOut. */
  rollingOut: "RollingOut",
  paused: "Paused",
} as const;

/** The `v`-prefixed form Cluster API shows versions in (`1.33.2` → `v1.33.2`). */
export function capiVersion(version: string): string {
  return version.startsWith("v") ? version : `v${version}`;
}
