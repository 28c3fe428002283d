/** Builders for the objects tests make: plain objects as a user applies them, with sensible defaults; `stored` adds what the API server fills in. */
import type { AccessRequest, AccessRequestSpec } from "../../src/api/access-request.ts";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { Cluster, ClusterStatus, Tenancy } from "../../src/api/cluster.ts";
import { CAPI_GROUP } from "../../src/api/cluster-api.ts";
import type { ClusterPool, ClusterPoolSpec } from "../../src/api/cluster-pool.ts";
import type { ClusterProfile, SupportedVersion } from "../../src/api/cluster-profile.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ObjectMeta } from "../../src/api/common.ts";
import {
  CLUSTERS_API_VERSION,
  ENGINE_API_VERSION,
  INFRASTRUCTURE_API_VERSION,
} from "../../src/api/constants.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import { CONTROLPLANE_API_VERSION, type EngineControlPlane } from "../../src/api/engine-control-plane.ts";
import type { ProviderConfig, ProviderConfigSpec } from "../../src/api/provider-config.ts";

/** Metadata any builder accepts besides the name. */
interface MetadataProps {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
}

const metadataOf = (props: MetadataProps): Partial<ObjectMeta> => ({
  ...(props.labels ? { labels: props.labels } : {}),
  ...(props.annotations ? { annotations: props.annotations } : {}),
  ...(props.finalizers ? { finalizers: props.finalizers } : {}),
});

/**
 * The cluster a backend is asked about, as the runtime hands it over: by default Exclusive `team-a/dev`
 * (uid `u-1`) of profile `p` from the ProviderConfig `sim`; `props` say what differs.
 */
export const aClusterTarget = (props: Partial<ClusterTarget> = {}): ClusterTarget => ({
  uid: "u-1",
  namespace: "team-a",
  name: "dev",
  tenancy: "Exclusive",
  profile: "p",
  providerConfig: "sim",
  ...props,
});

/** The target the runtime hands a backend for `cluster` (its uid, namespace and name); `props` say the rest. */
export const aTargetFor = (cluster: Cluster, props: Partial<ClusterTarget> = {}): ClusterTarget =>
  aClusterTarget({
    uid: cluster.metadata.uid ?? "",
    namespace: cluster.metadata.namespace ?? "",
    name: cluster.metadata.name ?? "",
    ...props,
  });

/** A tenant's labels and annotations on a target: one openMCP metadata key of each, and an unrelated label. */
export const TENANT_METADATA = {
  labels: { "metadata.open-control-plane.io/tenant": "acme", unrelated: "x" },
  annotations: { "metadata.open-control-plane.io/owner": "bob" },
} as const satisfies Partial<ClusterTarget>;

/** What {@link aCluster} makes. */
export interface ClusterProps extends MetadataProps {
  /** Default `my-cluster`. */
  readonly name?: string;
  /** Default `my-namespace`. */
  readonly namespace?: string;
  /** Default `test.engine-test.small`, the name {@link aClusterProfile} gives by default. */
  readonly profile?: string;
  /** Default `Shared`. */
  readonly tenancy?: Tenancy;
  /** `spec.kubernetes.version`; absent by default (the provider chooses). */
  readonly version?: string;
  readonly status?: ClusterStatus;
}

/** A Cluster as a user applies it. */
export function aCluster(props: ClusterProps = {}): Cluster {
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "Cluster",
    metadata: {
      name: props.name ?? "my-cluster",
      namespace: props.namespace ?? "my-namespace",
      ...metadataOf(props),
    },
    spec: {
      profile: props.profile ?? "test.engine-test.small",
      tenancy: props.tenancy ?? "Shared",
      ...(props.version ? { kubernetes: { version: props.version } } : {}),
    },
    ...(props.status ? { status: props.status } : {}),
  };
}

/** What {@link aClusterProfile} makes. */
export interface ClusterProfileProps {
  /** The `--provider-name` serving it. Default `engine-test`. */
  readonly provider?: string;
  /** The ProviderConfig it came from. Default `small`. */
  readonly config?: string;
  /** Default `test`. */
  readonly environment?: string;
  /** Default `<environment>.<provider>.<config>`, as the engine names profiles. */
  readonly name?: string;
  /** Default 1.33.3, 1.33.2 (deprecated) and 1.32.7. */
  readonly versions?: readonly SupportedVersion[];
}

/** A ClusterProfile as the engine makes it from a ProviderConfig (or a test applies it instead). */
export function aClusterProfile(props: ClusterProfileProps = {}): ClusterProfile {
  const provider = props.provider ?? "engine-test";
  const config = props.config ?? "small";
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "ClusterProfile",
    metadata: { name: props.name ?? `${props.environment ?? "test"}.${provider}.${config}` },
    spec: {
      providerRef: { name: provider },
      providerConfigRef: { name: config },
      supportedVersions: props.versions ?? [
        { version: "1.33.3" },
        { version: "1.33.2", deprecated: true },
        { version: "1.32.7" },
      ],
    },
  };
}

/** What {@link aProviderConfig} makes: the name, and any spec field. */
export interface ProviderConfigProps extends Partial<ProviderConfigSpec>, MetadataProps {
  /** Default `small`. */
  readonly name?: string;
}

/**
 * A ProviderConfig as an operator applies it; the backend defaults to `simulated`. Without `providerRef`
 * it names no provider, so the engine of its backend claims it (what a single-engine test wants); give
 * `providerRef` where several providers share the API server.
 */
export function aProviderConfig(props: ProviderConfigProps = {}): ProviderConfig {
  const { name, labels, annotations, finalizers, backend, ...spec } = props;
  return {
    apiVersion: ENGINE_API_VERSION,
    kind: "ProviderConfig",
    metadata: { name: name ?? "small", ...metadataOf({ labels, annotations, finalizers }) },
    spec: { backend: backend ?? "simulated", ...spec },
  };
}

/** What {@link anAccessRequest} makes: metadata, and a spec of which only the kind of access is required. */
export type AccessRequestProps = MetadataProps & {
  /** Default `my-access`. */
  readonly name?: string;
  /** Default `my-namespace`. */
  readonly namespace?: string;
  readonly status?: AccessRequest["status"];
} & AccessRequestSpec;

/**
 * An AccessRequest as a user applies it, for `token` or `oidc` access. Without `clusterRef` and
 * `requestRef` it refers to the Cluster {@link aCluster} makes by default.
 */
export function anAccessRequest(props: AccessRequestProps): AccessRequest {
  const { name, namespace, labels, annotations, finalizers, status, ...spec } = props;
  const target =
    spec.clusterRef || spec.requestRef
      ? {}
      : { clusterRef: { name: "my-cluster", namespace: namespace ?? "my-namespace" } };
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "AccessRequest",
    metadata: {
      name: name ?? "my-access",
      namespace: namespace ?? "my-namespace",
      ...metadataOf({ labels, annotations, finalizers }),
    },
    spec: { ...target, ...spec } as AccessRequestSpec,
    ...(status ? { status } : {}),
  };
}

/** A ClusterPool as a user applies it: named `warm`, keeping `spec.idle` clusters of `spec.providerConfig` ready. */
export function aClusterPool(
  name = "warm",
  spec: ClusterPoolSpec = { providerConfig: "small", idle: 2 },
): ClusterPool {
  return { apiVersion: ENGINE_API_VERSION, kind: "ClusterPool", metadata: { name }, spec };
}

/** What {@link aClusterRequest} makes. */
export interface ClusterRequestProps extends MetadataProps {
  /** Default `my-request`. */
  readonly name?: string;
  /** Default `my-namespace`. */
  readonly namespace?: string;
  /** Default `workload`. */
  readonly purpose?: string;
  readonly waitForClusterDeletion?: boolean;
}

/** A ClusterRequest as a user applies it (exactly openMCP's shape). */
export function aClusterRequest(props: ClusterRequestProps = {}): ClusterRequest {
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "ClusterRequest",
    metadata: {
      name: props.name ?? "my-request",
      namespace: props.namespace ?? "my-namespace",
      ...metadataOf(props),
    },
    spec: {
      purpose: props.purpose ?? "workload",
      ...(props.waitForClusterDeletion === undefined
        ? {}
        : { waitForClusterDeletion: props.waitForClusterDeletion }),
    },
  };
}

/** The owner reference a CAPI Cluster's controller puts on the infrastructure object it owns. */
export const capiOwner = (name = "workload") => ({
  apiVersion: `${CAPI_GROUP}/v1beta2`,
  kind: "Cluster",
  name,
  uid: "c0ffee00-0000-4000-8000-000000000001",
  controller: true,
  blockOwnerDeletion: true,
});

/** What {@link anEngineCluster} makes. */
export interface EngineClusterProps extends MetadataProps {
  /** Default `workload`. */
  readonly name?: string;
  /** Default `capi`. */
  readonly namespace?: string;
  /** Default `test.engine-test.small`, the name {@link aClusterProfile} gives by default. */
  readonly profile?: string;
  /** `spec.kubernetes.version`; absent by default. */
  readonly version?: string;
  /** The CAPI Cluster that owns it (its owner reference); none by default, as a user applies it. */
  readonly owner?: string;
}

/** An EngineCluster as a user (or clusterctl) applies it. */
export function anEngineCluster(props: EngineClusterProps = {}): EngineCluster {
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "EngineCluster",
    metadata: {
      name: props.name ?? "workload",
      namespace: props.namespace ?? "capi",
      ...(props.owner ? { ownerReferences: [capiOwner(props.owner)] } : {}),
      ...metadataOf(props),
    },
    spec: {
      profile: props.profile ?? "test.engine-test.small",
      ...(props.version ? { kubernetes: { version: props.version } } : {}),
    },
  };
}

/** What {@link anEngineControlPlane} makes. */
export interface EngineControlPlaneProps extends MetadataProps {
  /** Default `test.engine-test.small`, the name {@link aClusterProfile} gives by default. */
  readonly profile?: string;
  /** `spec.version`; default `v1.33.3`. */
  readonly version?: string;
  /** The CAPI Cluster that owns it (its owner reference); none by default, as a user applies it. */
  readonly owner?: string;
}

/** An EngineControlPlane `capi/workload` as a user (or Cluster API's topology controller) applies it. */
export function anEngineControlPlane(props: EngineControlPlaneProps = {}): EngineControlPlane {
  return {
    apiVersion: CONTROLPLANE_API_VERSION,
    kind: "EngineControlPlane",
    metadata: {
      name: "workload",
      namespace: "capi",
      ...(props.owner ? { ownerReferences: [capiOwner(props.owner)] } : {}),
      ...metadataOf(props),
    },
    spec: { profile: props.profile ?? "test.engine-test.small", version: props.version ?? "v1.33.3" },
  };
}

/** What the API server fills in on create; {@link stored} uses these unless told otherwise. */
export const STORED = {
  uid: "4a1e6f0e-0000-4000-8000-000000000001",
  generation: 1,
  resourceVersion: "100",
} as const;

/**
 * `object` as the API server holds it after the create: with a uid, generation and resourceVersion
 * (defaults {@link STORED}; pass a field as `undefined` to leave it out), for tests that skip the server.
 */
export function stored<T extends { readonly metadata: ObjectMeta }>(
  object: T,
  fields: Partial<Pick<ObjectMeta, "uid" | "generation" | "resourceVersion" | "creationTimestamp">> = {},
): T {
  const metadata: Record<string, unknown> = { ...object.metadata, ...STORED, ...fields };
  for (const key of Object.keys(metadata)) if (metadata[key] === undefined) delete metadata[key];
  return { ...object, metadata: metadata as ObjectMeta };
}
