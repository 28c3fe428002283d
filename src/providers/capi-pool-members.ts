/**
 * A warm pool's member as its CAPI Cluster carries it (contract 1.5): the marks that say which pool and member it is,
 * and the binding to a Cluster, which relabels the CAPI Cluster as that Cluster's own (Cluster API objects cannot be
 * renamed; labels can). The binding so lives on the CAPI Cluster itself, where every engine finds it. Pure.
 */
import type { ClusterTarget } from "../api/backend.ts";
import type { PoolMemberSpec } from "../api/backend-contract.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import { Patch, type PatchOperation } from "../machines/shared/json-patch.ts";
import { CAPI_BACKEND_KEYS, capiClusterName, engineVersion, type TopologyCluster } from "./capi-topology.ts";

/** A pool member as its CAPI Cluster says. */
export interface CapiPoolMember extends PoolMemberSpec {
  /** The Cluster uid it serves; absent while it is idle. */
  readonly boundTo?: string;
}

/** The name of member `id`'s CAPI Cluster: that of its member target, whatever it was bound to since. */
export const poolMemberClusterName = (id: string): string => capiClusterName(poolMemberTarget(id));

/** The label selector of every pool member's CAPI Cluster. */
export const POOL_MEMBER_SELECTOR = CAPI_BACKEND_KEYS.poolMemberLabel;

/** The label selector of the pool member bound to the Cluster with `uid`. */
export const boundMemberSelector = (uid: string): string =>
  `${CAPI_BACKEND_KEYS.clusterUidLabel}=${uid},${CAPI_BACKEND_KEYS.poolMemberLabel}`;

/** The pool member `cluster` is, or undefined when it is none. */
export function capiPoolMember(cluster: TopologyCluster): CapiPoolMember | undefined {
  const labels = cluster.metadata.labels ?? {};
  const annotations = cluster.metadata.annotations ?? {};
  const id = labels[CAPI_BACKEND_KEYS.poolMemberLabel];
  const pool = annotations[CAPI_BACKEND_KEYS.poolAnnotation];
  if (!id || pool === undefined) return undefined;
  const version =
    annotations[CAPI_BACKEND_KEYS.poolVersionAnnotation] ??
    engineVersion(cluster.spec.topology?.version ?? "");
  const uid = labels[CAPI_BACKEND_KEYS.clusterUidLabel];
  return { id, pool, version, ...(uid !== undefined && uid !== id ? { boundTo: uid } : {}) };
}

/**
 * The JSON patch that binds member `id` (`cluster`) to the Cluster `target`: the uid, namespace, name and
 * ProviderConfig labels become the Cluster's, under a test that the uid label still names the member (so it never
 * takes a member bound meanwhile). Empty when it is bound to that Cluster already. Throws when `cluster` is not member
 * `id`, is being deleted, or serves another Cluster.
 */
export function bindingOperations(
  cluster: TopologyCluster,
  id: string,
  target: ClusterTarget,
): PatchOperation[] {
  const where = `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  const member = capiPoolMember(cluster);
  if (member?.id !== id) throw new Error(`${where} is not pool member ${id}`);
  const labels = cluster.metadata.labels ?? {};
  if (member.boundTo !== undefined && member.boundTo !== target.uid)
    throw new Error(
      `pool member ${id} (${where}) serves Cluster ${labels[CAPI_BACKEND_KEYS.clusterNamespaceLabel]}/${labels[CAPI_BACKEND_KEYS.clusterNameLabel]} (uid ${member.boundTo}); Cluster ${target.namespace}/${target.name} cannot take it`,
    );
  if (cluster.metadata.deletionTimestamp)
    throw new Error(
      `pool member ${id} (${where}) is being deleted; Cluster ${target.namespace}/${target.name} cannot take it`,
    );
  const wanted: Record<string, string> = {
    [CAPI_BACKEND_KEYS.clusterUidLabel]: target.uid,
    [CAPI_BACKEND_KEYS.clusterNamespaceLabel]: target.namespace,
    [CAPI_BACKEND_KEYS.clusterNameLabel]: target.name,
    [CAPI_BACKEND_KEYS.providerConfigLabel]: target.providerConfig,
  };
  const changed = Object.entries(wanted).filter(([key, value]) => labels[key] !== value);
  if (changed.length === 0) return [];
  return [
    Patch.test(
      ["metadata", "labels", CAPI_BACKEND_KEYS.clusterUidLabel],
      labels[CAPI_BACKEND_KEYS.clusterUidLabel] ?? null,
    ),
    ...changed.map(([key, value]) => Patch.add(["metadata", "labels", key], value)),
  ];
}
