/**
 * The names on the wire that every kind shares: API groups and versions, the resource table, the labels,
 * annotations, phases, conditions and reasons more than one kind uses. A kind's own are in `constants/<kind>.ts`.
 */

/** API group of the openMCP cluster resources (Cluster, ClusterProfile, ClusterRequest, AccessRequest). */
export const CLUSTERS_GROUP = "clusters.openmcp.cloud";
/** The only served version of {@link CLUSTERS_GROUP}. */
export const CLUSTERS_VERSION = "v1alpha1";
/** `apiVersion` of the openMCP cluster resources. */
export const CLUSTERS_API_VERSION = `${CLUSTERS_GROUP}/${CLUSTERS_VERSION}`;

/** API group of the engine's own resources (ProviderConfig). */
export const ENGINE_GROUP = "engine.openmcp.cloud";
/** The only served version of {@link ENGINE_GROUP}. */
export const ENGINE_VERSION = "v1alpha1";
/** `apiVersion` of the engine's own resources. */
export const ENGINE_API_VERSION = `${ENGINE_GROUP}/${ENGINE_VERSION}`;

/** API group of the engine's Cluster API infrastructure kinds (EngineCluster, its template, ClusterEndpoint). */
export const INFRASTRUCTURE_GROUP = "infrastructure.engine.openmcp.cloud";
/** The only served version of {@link INFRASTRUCTURE_GROUP}; it serves Cluster API's v1beta2 contract. */
export const INFRASTRUCTURE_VERSION = "v1alpha1";
/** `apiVersion` of the engine's infrastructure kinds. */
export const INFRASTRUCTURE_API_VERSION = `${INFRASTRUCTURE_GROUP}/${INFRASTRUCTURE_VERSION}`;

/** API group of openMCP's Gardener provider's own kinds (ClusterConfig), which the `gardener` backend serves too. */
export const GARDENER_CLUSTERS_GROUP = "gardener.clusters.openmcp.cloud";
/** The only served version of {@link GARDENER_CLUSTERS_GROUP}. */
export const GARDENER_CLUSTERS_VERSION = "v1alpha1";
/** `apiVersion` of openMCP's Gardener provider's kinds. */
export const GARDENER_CLUSTERS_API_VERSION = `${GARDENER_CLUSTERS_GROUP}/${GARDENER_CLUSTERS_VERSION}`;

/** A group's resources in its one served version: `served(GROUP, VERSION)("plurals", namespaced)`. */
export const served =
  <G extends string, V extends string>(group: G, version: V) =>
  <P extends string, N extends boolean>(plural: P, namespaced: N) =>
    ({ group, version, plural, namespaced }) as const;

/** A resource of the engine's own group ({@link ENGINE_GROUP}). */
export const engineResource = served(ENGINE_GROUP, ENGINE_VERSION);
/** A resource of the engine's infrastructure group ({@link INFRASTRUCTURE_GROUP}). */
export const infrastructureResource = served(INFRASTRUCTURE_GROUP, INFRASTRUCTURE_VERSION);
const clustersResource = served(CLUSTERS_GROUP, CLUSTERS_VERSION);

/** Kinds and their plural resource names, as served by our CRDs. */
export const RESOURCES = {
  Cluster: clustersResource("clusters", true),
  ClusterProfile: clustersResource("clusterprofiles", false),
  ClusterRequest: clustersResource("clusterrequests", true),
  AccessRequest: clustersResource("accessrequests", true),
  ProviderConfig: engineResource("providerconfigs", false),
  Purpose: engineResource("purposes", false),
  ClusterPool: engineResource("clusterpools", false),
  ClusterRequestGrant: engineResource("clusterrequestgrants", true),
  EngineCluster: infrastructureResource("engineclusters", true),
  EngineClusterTemplate: infrastructureResource("engineclustertemplates", true),
  ClusterEndpoint: infrastructureResource("clusterendpoints", true),
  ClusterConfig: served(GARDENER_CLUSTERS_GROUP, GARDENER_CLUSTERS_VERSION)("clusterconfigs", true),
} as const;

/** A kind the engine serves a CRD for. */
export type ResourceKind = keyof typeof RESOURCES;

/** Labels every kind uses: the provider responsible for an object, and the mark of the engine's objects. */
export const LABELS = {
  /** Name of the provider responsible for a Cluster or an AccessRequest. */
  provider: `${CLUSTERS_GROUP}/provider`,
  /** The standard label naming the tool that manages an object; ours carry {@link MANAGED_BY_ENGINE}. */
  managedBy: "app.kubernetes.io/managed-by",
} as const;

/** Value of {@link LABELS.managedBy} on the objects the engine makes on target clusters. */
export const MANAGED_BY_ENGINE = "openmcp-engine";

/** Label the openMCP operator expects on a provider's CRDs: which cluster of the landscape they belong to. */
export const CRD_CLUSTER_LABEL = { key: "openmcp.cloud/cluster", platform: "platform" } as const;

/** Annotations with a meaning to the engine on more than one kind. */
export const ANNOTATIONS = {
  /** `ignore` skips the object; `reconcile` forces one reconcile and is then removed. */
  operation: "openmcp.cloud/operation",
  /**
   * On a ClusterRequest: the traits it wishes for (`a, ?b, !c, d|e`: `?` optional, `!` must not have,
   * `|` any of); on a ClusterProfile: the traits its clusters have (`a, b`).
   */
  traits: `${ENGINE_GROUP}/traits`,
  /**
   * A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`): the span an object's own spans continue. Set by
   * whoever made the object (the scheduler on the Clusters it makes, a pipeline on its ClusterRequest).
   */
  traceparent: `${ENGINE_GROUP}/traceparent`,
} as const;

/** Values of {@link ANNOTATIONS.operation}. */
export const OPERATIONS = { ignore: "ignore", reconcile: "reconcile" } as const;

/** Values of `status.phase` of Cluster-like objects. */
export const CLUSTER_PHASES = {
  ready: "Ready",
  progressing: "Progressing",
  terminating: "Terminating",
} as const;

/** Values of `status.phase` of request objects (AccessRequest, ClusterRequest). */
export const REQUEST_PHASES = { pending: "Pending", granted: "Granted", denied: "Denied" } as const;

/** Condition types more than one kind writes or reads. */
export const CONDITION_TYPES = {
  /** The infrastructure exists and reports ready. */
  clusterReady: "ClusterReady",
} as const;

/**
 * Reasons carried by conditions and Events of more than one kind; each tells a person what kind of problem
 * it is. A kind's own reasons are in `constants/<kind>.ts`.
 */
export const REASONS = {
  ProfileNotFound: "ProfileNotFound",
  ConfigurationProblem: "ConfigurationProblem",
  UnsupportedVersion: "UnsupportedVersion",
  DowngradeNotAllowed: "DowngradeNotAllowed",
  BackendError: "BackendError",
  /**
   * A reconcile's look at the world failed (e.g. the backend's credentials are gone, or it cannot be reached):
   * told as an Event, and on a Cluster as its ClusterReady condition until a look succeeds again.
   */
  ObserveFailed: "ObserveFailed",
  /** A Ready Cluster whose backend reports it no longer ready (e.g. its processes or node containers stopped). */
  BackendNotReady: "BackendNotReady",
  /** The object is paused for a move between management clusters: the engine leaves it alone. Told as an Event. */
  Paused: "Paused",
  Provisioning: "Provisioning",
  Updating: "Updating",
  Ready: "Ready",
  Deleting: "Deleting",
  WaitingForForeignFinalizers: "WaitingForForeignFinalizers",
  Granted: "Granted",
  Denied: "Denied",
} as const;
