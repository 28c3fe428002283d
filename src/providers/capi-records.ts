/**
 * Where the `capi` backend's CAPI Clusters are: a place (a management cluster and a namespace there), the record it
 * keeps per Cluster, and what it holds of a management cluster. Pure.
 */
import type { ClusterTarget } from "../api/backend.ts";
import { CAPI_CLUSTER_RESOURCE } from "../api/cluster-api.ts";
import type { CapiSettings } from "./capi-settings.ts";
import type { KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import type { RemoteApi, RemoteRecord } from "./shared/remote-object.ts";

/** CAPI Clusters, as the custom objects API names them. */
export const CAPI_CLUSTERS = {
  group: CAPI_CLUSTER_RESOURCE.group,
  version: CAPI_CLUSTER_RESOURCE.version,
  plural: CAPI_CLUSTER_RESOURCE.plural,
} as const;

/** A management cluster: where it is and clients for it. */
export interface Management extends RemoteApi {
  readonly server: string;
}

/** Where the CAPI Clusters of one ProviderConfig go. */
export interface CapiPlace {
  /** The management cluster's kubeconfig Secret; absent: the default management cluster. */
  readonly management?: KubeconfigSecretRef;
  readonly namespace: string;
  /** The ProviderConfig that put CAPI Clusters there, for messages. */
  readonly providerConfig: string;
  readonly deletionTimeoutMs: number;
}

/** What the backend remembers of one Cluster (or pool member): where its CAPI Cluster is. */
export interface CapiRecord extends RemoteRecord {
  readonly management?: KubeconfigSecretRef;
  readonly name: string;
  readonly deletionTimeoutMs: number;
  /** The pool member the CAPI Cluster is: the Cluster's since it was bound, unless `uid` is the member's id. */
  readonly poolMember?: { readonly id: string; readonly pool: string };
}

/** The place `settings` of ProviderConfig `providerConfig` name. */
export function placeOf(settings: CapiSettings, providerConfig: string): CapiPlace {
  return {
    ...(settings.management ? { management: settings.management } : {}),
    namespace: settings.namespace,
    providerConfig,
    deletionTimeoutMs: settings.deletionTimeoutMs,
  };
}

/** The place a record names. */
export function placeOfRecord(record: CapiRecord): CapiPlace {
  return {
    ...(record.management ? { management: record.management } : {}),
    namespace: record.namespace,
    providerConfig: record.providerConfig,
    deletionTimeoutMs: record.deletionTimeoutMs,
  };
}

/** One key per management cluster and namespace (two ProviderConfigs may share a place). */
export function placeKey(place: CapiPlace): string {
  const ref = place.management;
  return JSON.stringify([ref ? [ref.namespace, ref.name, ref.key] : null, place.namespace]);
}

/** A record for `target`: its CAPI Cluster `name` at `place`, ordered at `version`. */
export function recordOf(
  target: Pick<ClusterTarget, "uid" | "namespace" | "name" | "providerConfig">,
  place: CapiPlace,
  name: string,
  version: string,
  poolMember?: CapiRecord["poolMember"],
): CapiRecord {
  return {
    uid: target.uid,
    cluster: `${target.namespace}/${target.name}`,
    providerConfig: target.providerConfig,
    ...(place.management ? { management: place.management } : {}),
    namespace: place.namespace,
    name,
    version,
    deletionTimeoutMs: place.deletionTimeoutMs,
    ...(poolMember ? { poolMember } : {}),
  };
}
