/** Every name on the wire that the engine shares with openMCP: groups, labels, annotations, finalizers, reasons. */

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

/** Kinds and their plural resource names, as served by our CRDs. */
export const RESOURCES = {
  Cluster: { group: CLUSTERS_GROUP, version: CLUSTERS_VERSION, plural: "clusters", namespaced: true },
  ClusterProfile: {
    group: CLUSTERS_GROUP,
    version: CLUSTERS_VERSION,
    plural: "clusterprofiles",
    namespaced: false,
  },
  ClusterRequest: {
    group: CLUSTERS_GROUP,
    version: CLUSTERS_VERSION,
    plural: "clusterrequests",
    namespaced: true,
  },
  AccessRequest: {
    group: CLUSTERS_GROUP,
    version: CLUSTERS_VERSION,
    plural: "accessrequests",
    namespaced: true,
  },
  ProviderConfig: {
    group: ENGINE_GROUP,
    version: ENGINE_VERSION,
    plural: "providerconfigs",
    namespaced: false,
  },
  Purpose: { group: ENGINE_GROUP, version: ENGINE_VERSION, plural: "purposes", namespaced: false },
  ClusterPool: { group: ENGINE_GROUP, version: ENGINE_VERSION, plural: "clusterpools", namespaced: false },
  ClusterRequestGrant: {
    group: ENGINE_GROUP,
    version: ENGINE_VERSION,
    plural: "clusterrequestgrants",
    namespaced: true,
  },
  EngineCluster: {
    group: INFRASTRUCTURE_GROUP,
    version: INFRASTRUCTURE_VERSION,
    plural: "engineclusters",
    namespaced: true,
  },
  EngineClusterTemplate: {
    group: INFRASTRUCTURE_GROUP,
    version: INFRASTRUCTURE_VERSION,
    plural: "engineclustertemplates",
    namespaced: true,
  },
  ClusterEndpoint: {
    group: INFRASTRUCTURE_GROUP,
    version: INFRASTRUCTURE_VERSION,
    plural: "clusterendpoints",
    namespaced: true,
  },
  ClusterConfig: {
    group: GARDENER_CLUSTERS_GROUP,
    version: GARDENER_CLUSTERS_VERSION,
    plural: "clusterconfigs",
    namespaced: true,
  },
} as const;

/** A kind the engine serves a CRD for. */
export type ResourceKind = keyof typeof RESOURCES;

/** Labels the provider sets on Clusters, that preparation sets on AccessRequests, and that mark the engine's objects. */
export const LABELS = {
  /** Actual Kubernetes version of a Cluster (shown as the Version column). */
  k8sVersion: `${CLUSTERS_GROUP}/k8sversion`,
  /** Name of the provider responsible for a Cluster or an AccessRequest. */
  provider: `${CLUSTERS_GROUP}/provider`,
  /** Name of the ClusterProfile of a prepared AccessRequest. */
  profile: `${CLUSTERS_GROUP}/profile`,
  /** Set by the scheduler on Clusters it may delete once no request references them. */
  deleteWithoutRequests: `${CLUSTERS_GROUP}/delete-without-requests`,
  /** Set on ClusterRequests whose Cluster gets a random name. */
  randomizeClusterName: `${CLUSTERS_GROUP}/randomize-cluster-name`,
  /** The ProviderConfig a generated ClusterProfile came from. */
  providerConfig: `${ENGINE_GROUP}/provider-config`,
  /** On objects made on a target cluster for an AccessRequest: that request's UID (its owner). */
  accessRequestUid: `${ENGINE_GROUP}/access-request-uid`,
  /** On the kubeconfig Secret and ClusterEndpoint published for an EngineCluster: its UID (their owner). */
  engineClusterUid: `${INFRASTRUCTURE_GROUP}/enginecluster-uid`,
  /** On a sharded replica's membership Lease: the ring it belongs to (the provider's name). */
  shardRing: `${ENGINE_GROUP}/shard-ring`,
  /** The standard label naming the tool that manages an object; ours carry {@link MANAGED_BY_ENGINE}. */
  managedBy: "app.kubernetes.io/managed-by",
  /**
   * `"true"` on a Cluster: deleting it is refused until it is annotated {@link ANNOTATIONS.confirmDeletion}
   * (crds/policies/cluster-deletion-protection.yaml); a landscape's platform cluster carries it.
   */
  deletionProtection: `${ENGINE_GROUP}/deletion-protection`,
} as const;

/** Value of {@link LABELS.managedBy} on the objects the engine makes on target clusters. */
export const MANAGED_BY_ENGINE = "openmcp-engine";

/** Label the openMCP operator expects on a provider's CRDs: which cluster of the landscape they belong to. */
export const CRD_CLUSTER_LABEL = { key: "openmcp.cloud/cluster", platform: "platform" } as const;

/** Prefix of labels and annotations copied from a ClusterRequest to its Exclusive Cluster. */
export const COPIED_METADATA_PREFIX = "metadata.open-control-plane.io/";

/** Annotations with a meaning to the engine. */
export const ANNOTATIONS = {
  /** Free-text provider information, shown by `kubectl get clusters -o wide`. */
  providerInfo: `${CLUSTERS_GROUP}/providerinfo`,
  /** `ignore` skips the object; `reconcile` forces one reconcile and is then removed. */
  operation: "openmcp.cloud/operation",
  /**
   * On a ClusterRequest: the traits it wishes for (`a, ?b, !c, d|e`: `?` optional, `!` must not have,
   * `|` any of); on a ClusterProfile: the traits its clusters have (`a, b`).
   */
  traits: `${ENGINE_GROUP}/traits`,
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
  /** On a sharded replica's membership Lease: the members (comma-separated) it has acknowledged and works by. */
  shardMembers: `${ENGINE_GROUP}/shard-members`,
  /**
   * On a Granted AccessRequest whose Cluster is reached on an internal address (its kubeconfig names
   * `apiserver-internal`): the API server's URL from the host, which tools out of cluster swap in (openMCP's).
   */
  localAccess: "clusters.open-control-plane.io/local-access",
  /** `"true"` on a Cluster labelled {@link LABELS.deletionProtection}: the explicit step that lets it be deleted. */
  confirmDeletion: `${ENGINE_GROUP}/confirm-deletion`,
  /** On a Cluster served from a warm pool: `<ClusterPool name>/<pool cluster id>`, written once it is bound. */
  poolMember: `${ENGINE_GROUP}/pool-member`,
  /** On a ProviderConfig the engine made itself: who made it (`init`, the default configuration). */
  madeBy: `${ENGINE_GROUP}/made-by`,
  /**
   * A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`): the span an object's own spans continue. Set by
   * whoever made the object (the scheduler on the Clusters it makes, a pipeline on its ClusterRequest).
   */
  traceparent: `${ENGINE_GROUP}/traceparent`,
} as const;

/**
 * Prefix of the annotations on a shared Cluster that claim a name prefix for one request
 * (`prefix.engine.openmcp.cloud/<ClusterRequest UID>: <prefix>`); written together with the request's
 * finalizer, so two requests can never claim colliding prefixes on one Cluster.
 */
export const PREFIX_CLAIM_ANNOTATION_PREFIX = `prefix.${ENGINE_GROUP}/`;

/** Values of {@link ANNOTATIONS.operation}. */
export const OPERATIONS = { ignore: "ignore", reconcile: "reconcile" } as const;

/** Finalizers. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const FINALIZERS = {
  /** Ours on Clusters: the backend may still hold infrastructure for this object. */
  cluster: `${ENGINE_GROUP}/cluster`,
  /** Ours on AccessRequests: access objects may still exist on the target cluster. */
  accessRequest: `${ENGINE_GROUP}/accessrequest`,
  /** Ours on EngineClusters: the backend may still hold the cluster, its kubeconfig and endpoint are published. */
  engineCluster: `${INFRASTRUCTURE_GROUP}/enginecluster`,
  /** The scheduler's finalizer on ClusterRequests. */
  request: `${CLUSTERS_GROUP}/request`,
  /** Prefix of the scheduler's per-request finalizers on Clusters (`…/<ClusterRequest UID>`). */
  requestOnClusterPrefix: `request.${CLUSTERS_GROUP}/`,
  /** Ours on ClusterPools: the pool may still hold clusters at the backend. */
  clusterPool: `${ENGINE_GROUP}/clusterpool`,
} as const;

/** Values of `status.phase` of Cluster-like objects. */
export const CLUSTER_PHASES = {
  ready: "Ready",
  progressing: "Progressing",
  terminating: "Terminating",
} as const;

/** Values of `status.phase` of request objects (AccessRequest, ClusterRequest). */
export const REQUEST_PHASES = { pending: "Pending", granted: "Granted", denied: "Denied" } as const;

/** Values of `spec.tenancy` of a Cluster. */
export const TENANCIES = ["Exclusive", "Shared"] as const;

/** Names of `status.endpoints[]` entries of a Cluster. */
export const ENDPOINTS = { external: "apiserver-external", internal: "apiserver-internal" } as const;

/** Condition types the engine writes. */
export const CONDITION_TYPES = {
  /** The object is served by this provider (its profile resolved and is ours). */
  profileResolved: "ProfileResolved",
  /** The requested Kubernetes version is supported. */
  versionSupported: "VersionSupported",
  /** The infrastructure exists and reports ready. */
  clusterReady: "ClusterReady",
  /** Deletion waits for nobody but us. */
  deletionUnblocked: "DeletionUnblocked",
  /** Access for an AccessRequest is in place. */
  accessGranted: "AccessGranted",
  /** Every role an AccessRequest binds by reference exists on the target cluster. */
  referencedRolesExist: "ReferencedRolesExist",
  /** A ClusterRequest has its Cluster: finalizer, prefix claim and grant in place. */
  clusterGranted: "ClusterGranted",
  /** A shared ClusterRequest that proposes a prefix: whether it got it, and if not why. */
  proposedPrefix: "ProposedPrefix",
} as const;

/** Reasons carried by conditions and Events; each tells a person what kind of problem it is. */
export const REASONS = {
  ProfileNotFound: "ProfileNotFound",
  /** The profile an object names is missing because the ProviderConfig that would publish it is not Ready. */
  ProviderConfigNotReady: "ProviderConfigNotReady",
  /**
   * ProviderConfig: the ClusterProfile it would publish exists and is another's (another provider's, or
   * another ProviderConfig's of this provider); no profile is written.
   */
  ProfileNameTaken: "ProfileNameTaken",
  ConfigurationProblem: "ConfigurationProblem",
  InvalidReference: "InvalidReference",
  UnsupportedVersion: "UnsupportedVersion",
  DeprecatedVersion: "DeprecatedVersion",
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
  /** A Cluster moved here by `openmcp-engine move`: the backend imports its state from the hand-over Secret. */
  TakingOver: "TakingOver",
  /** The backend reports the cluster incomplete; create is ordered again to make what is missing. */
  Repairing: "Repairing",
  Updating: "Updating",
  Ready: "Ready",
  Deleting: "Deleting",
  WaitingForForeignFinalizers: "WaitingForForeignFinalizers",
  Granted: "Granted",
  Denied: "Denied",
  /** AccessRequest: a role it binds by reference does not exist on the target, so the binding grants nothing. */
  RoleMissing: "RoleMissing",
  /** AccessRequest: every role it binds by reference exists on the target. */
  RolesFound: "RolesFound",
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
  /** AccessRequest: the target cluster's API server refused the engine's admin access (401, 403). */
  TargetRefused: "TargetRefused",
  /** AccessRequest: the target cluster's API server cannot be reached (connection refused, TLS, timeout). */
  TargetUnreachable: "TargetUnreachable",
  /** AccessRequest: the target cluster's API server answered a call with another error (e.g. 404 of an API, 500). */
  TargetError: "TargetError",
  /** AccessRequest: it asks for more than the backend's namespaced admin access may give (cluster-wide rights, other namespaces). */
  OutsideAdminScope: "OutsideAdminScope",
} as const;

/** A reason from {@link REASONS}. */
export type Reason = (typeof REASONS)[keyof typeof REASONS];

/**
 * Messages of the CEL rules in our CRDs, exactly as the API server reports them.
 * The openMCP ones match upstream word for word; the others are ours.
 */
export const VALIDATION_MESSAGES = {
  /** Cluster: `spec.profile` may not change (upstream). */
  profileImmutable: "profile is immutable",
  /** ClusterRequest: the whole spec may not change (upstream). */
  clusterRequestSpecImmutable: "spec is immutable",
  /** ClusterRequest: `status.cluster` may not change (upstream). */
  statusClusterImmutable: "cluster is immutable",
  /** ClusterRequest: `status.cluster` may not be removed (upstream). */
  statusClusterNotRemovable: "cluster may not be removed once set",
  /** AccessRequest: `spec.clusterRef` may not change (upstream). */
  clusterRefImmutable: "clusterRef is immutable",
  /** AccessRequest: `spec.clusterRef` may not be removed (upstream). */
  clusterRefNotRemovable: "clusterRef may not be removed once set",
  /** AccessRequest: `spec.requestRef` may not change (upstream). */
  requestRefImmutable: "requestRef is immutable",
  /** AccessRequest: `spec.requestRef` may not be removed (upstream). */
  requestRefNotRemovable: "requestRef may not be removed once set",
  /** AccessRequest: token and oidc exclude each other, one is needed (upstream). */
  exactlyOneAccessKind: "exactly one of spec.token or spec.oidc must be set",
  /** AccessRequest: an OIDC provider may not be called `system` (upstream). */
  oidcNameReserved: "'system' is a reserved string and may not be used as OIDC provider name",
  /** AccessRequest: a target is needed (ours; upstream documents it but does not enforce it). */
  targetRequired: "at least one of spec.clusterRef or spec.requestRef must be set",
  /** AccessRequest: its name leaves room for the Secret `<name>.kubeconfig` (ours). */
  accessRequestNameLength:
    "an AccessRequest name may have at most 242 characters, so that its Secret <name>.kubeconfig fits in 253",
  /** AccessRequest: the issuer must be an http(s) URL (ours; upstream uses a bare pattern). */
  issuerUrl: "issuer must be an http:// or https:// URL",
  /** AccessRequest: the ttl must be a positive Go-style duration (ours). */
  ttlDuration: "ttl must be a positive duration such as 30m, 1h or 1h30m",
  /** ClusterProfile: `spec.providerConfigRef.name` doubles as a label value (ours). */
  providerConfigRefLabelValue:
    "providerConfigRef.name must be a valid label value: at most 63 characters, alphanumeric at both ends, with only '-', '_' or '.' in between",
  /** ProviderConfig: its name becomes a ClusterProfile's providerConfigRef.name (ours). */
  providerConfigNameLabelValue:
    "the name of a ProviderConfig must be a valid label value (at most 63 characters), because it becomes the providerConfigRef.name of its ClusterProfile",
  /** ProviderConfig: `spec.backend` may not change (ours). */
  backendImmutable: "backend is immutable; create a new ProviderConfig to move to another backend",
  /** ProviderConfig: `spec.providerRef` may be set once, never changed or removed (ours). */
  providerRefImmutable:
    "providerRef is immutable once set: the clusters of this config belong to that provider; create a new ProviderConfig for another provider",
  /** ProviderConfig: `spec.profileName` is given at creation or never, and never changed or removed (ours). */
  profileNameImmutable:
    "profileName is given at creation or never, and never changed or removed: a Cluster's profile is immutable, so renaming the ClusterProfile would orphan the Clusters that name it; create a new ProviderConfig for another profile name",
  /** ProviderConfig: the default version must be offered and current (ours). */
  defaultVersionSupported: "defaultVersion must be a non-deprecated entry of spec.supportedVersions",
  /** EngineCluster: the endpoint Cluster API reads never changes once set (the contract). */
  controlPlaneEndpointImmutable: "controlPlaneEndpoint is immutable once set",
  /** EngineClusterTemplate: ClusterClasses roll out a new template instead of editing one. */
  templateImmutable: "spec.template is immutable",
  /** Purpose: each entry of `spec.traits` names its trait one way (ours). */
  purposeTraitOrAnyOf: "exactly one of trait and anyOf must be set",
  /** ClusterRequestGrant: the whole spec may not change; the scheduler replaces a grant instead (ours). */
  grantSpecImmutable: "spec is immutable",
} as const;
