/**
 * The Cluster API (cluster.x-k8s.io) names the engine shares as an infrastructure provider: the
 * contract label of its CRDs, the labels and annotations CAPI reads and writes, and the parts of a CAPI
 * `Cluster` the engine reads. Facts from the InfraCluster contract (v1beta2), not our inventions.
 */
import type { Condition, ObjectMeta } from "./common.ts";

/** API group of Cluster API's core kinds. */
export const CAPI_GROUP = "cluster.x-k8s.io";
/** The contract version the engine implements (and the version of CAPI `Cluster`s it reads). */
export const CAPI_CONTRACT = "v1beta2";

/** The CAPI `Cluster` resource, as the engine reads it. */
export const CAPI_CLUSTER_RESOURCE = {
  group: CAPI_GROUP,
  version: CAPI_CONTRACT,
  plural: "clusters",
  namespaced: true,
} as const;

/** Name of the CRD whose presence means Cluster API is installed. */
export const CAPI_CLUSTER_CRD = `clusters.${CAPI_GROUP}`;

/** Labels of the contract. */
export const CAPI_LABELS = {
  /** On a provider's CRDs: which of its versions serve the v1beta2 contract (`v1alpha1`, `_`-separated). */
  contract: `${CAPI_GROUP}/${CAPI_CONTRACT}`,
  /** On every object of one CAPI Cluster (set by CAPI on ours; by us on the kubeconfig Secret). */
  clusterName: `${CAPI_GROUP}/cluster-name`,
  /** On a provider's components: `infrastructure-<name>`. */
  provider: `${CAPI_GROUP}/provider`,
  /** On a ClusterRole: aggregate it into CAPI's manager role. */
  aggregateToManager: `${CAPI_GROUP}/aggregate-to-manager`,
  /** On objects split between instances of a provider: the value of the instance's `--watch-filter`. */
  watchFilter: `${CAPI_GROUP}/watch-filter`,
} as const;

/** Annotations of the contract. */
export const CAPI_ANNOTATIONS = {
  /** The object (or its Cluster) is paused: no writes but the Paused condition, no infrastructure calls. */
  paused: `${CAPI_GROUP}/paused`,
  /** The infrastructure is managed by someone else: the provider must not touch the object at all. */
  managedBy: `${CAPI_GROUP}/managed-by`,
} as const;

/** The type of the Secrets Cluster API keeps a cluster's key pairs and kubeconfig in (it owns those of this type). */
export const CAPI_SECRET_TYPE = `${CAPI_GROUP}/secret`;
/** Type and key of the kubeconfig Secret CAPI's cluster cache reads (`<cluster>-kubeconfig`). */
export const CAPI_KUBECONFIG_SECRET = { type: CAPI_SECRET_TYPE, key: "value" } as const;

/** The name of the kubeconfig Secret of a CAPI Cluster. */
export const kubeconfigSecretName = (cluster: string): string => `${cluster}-kubeconfig`;

/** Condition types of the v1beta2 contract that the engine writes. */
export const CAPI_CONDITIONS = { ready: "Ready", paused: "Paused" } as const;

/** Where an API server listens, as the contract's `controlPlaneEndpoint` says it. */
export interface ApiEndpoint {
  readonly host: string;
  readonly port: number;
}

/** A CAPI `Cluster` (cluster.x-k8s.io/v1beta2), as far as the engine reads it. */
export interface CapiCluster {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly spec?: {
    /** A paused Cluster pauses its infrastructure object too. */
    readonly paused?: boolean;
    readonly controlPlaneEndpoint?: Partial<ApiEndpoint>;
    readonly infrastructureRef?: {
      readonly apiGroup?: string;
      readonly kind?: string;
      readonly name?: string;
    };
    readonly controlPlaneRef?: {
      readonly apiGroup?: string;
      readonly kind?: string;
      readonly name?: string;
    };
  };
  readonly status?: {
    readonly phase?: string;
    /** Set by CAPI: the infrastructure is provisioned (at once for a Cluster without infrastructureRef). */
    readonly initialization?: { readonly infrastructureProvisioned?: boolean };
    /** CAPI's v1beta2 conditions (Available, ControlPlaneAvailable, …), for people and the demo. */
    readonly conditions?: readonly Condition[];
  };
}

/** The CAPI Cluster that owns `metadata` (its ownerReference of kind Cluster in cluster.x-k8s.io), by name. */
export function owningCapiCluster(metadata: ObjectMeta): string | undefined {
  return metadata.ownerReferences?.find(
    (owner) => owner.kind === "Cluster" && owner.apiVersion.startsWith(`${CAPI_GROUP}/`),
  )?.name;
}
