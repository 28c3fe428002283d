/**
 * Which pool member a new Cluster may take, and the claim that records it. Pure.
 *
 * A Cluster takes a member only before anything was made for it (no finalizer of ours, nothing at the backend
 * under its uid), so it never ends up with two clusters; the claim goes into the pool's status with a test on
 * the member's entry (and the runtime's test on resourceVersion), so two Clusters never claim one member.
 */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterPool, PoolClaim, PoolMember } from "../../api/cluster-pool.ts";
import { CLUSTER_FINALIZERS } from "../../api/constants/cluster.ts";
import { type Json, Patch, type PatchOperation } from "../shared/json-patch.ts";

/** The claim a pool records for `cluster`, if one does. */
export function claimOf(
  pools: readonly ClusterPool[],
  uid: string,
): { readonly pool: ClusterPool; readonly member: PoolMember } | undefined {
  for (const pool of pools) {
    const member = pool.status?.members?.find((entry) => entry.claimedBy?.uid === uid);
    if (member) return { pool, member };
  }
  return undefined;
}

/** Whether `cluster` may still take a pool member: alive, nothing made for it yet (`builtNothing`: the backend holds nothing under its uid). */
export function mayTakeMember(cluster: Cluster, builtNothing: boolean): boolean {
  return (
    builtNothing &&
    cluster.metadata.deletionTimestamp === undefined &&
    !(cluster.metadata.finalizers ?? []).includes(CLUSTER_FINALIZERS.cluster)
  );
}

/** An idle Ready member of `version` in one of `pools` (of the Cluster's ProviderConfig), first pool first. */
export function idleMember(
  pools: readonly ClusterPool[],
  providerConfig: string,
  version: string,
): { readonly pool: ClusterPool; readonly index: number; readonly member: PoolMember } | undefined {
  for (const pool of pools) {
    if (pool.spec.providerConfig !== providerConfig || pool.metadata.deletionTimestamp !== undefined)
      continue;
    const members = pool.status?.members ?? [];
    const index = members.findIndex(
      (member) => !member.claimedBy && member.phase === "Ready" && member.version === version,
    );
    const member = members[index];
    if (member) return { pool, index, member };
  }
  return undefined;
}

/** The status patch that claims member `index` (whose id is `id`) for `claim`: fails if that entry changed meanwhile. */
export function claimOperations(index: number, id: string, claim: PoolClaim): PatchOperation[] {
  return [
    Patch.test(["status", "members", index, "id"], id),
    Patch.add(["status", "members", index, "claimedBy"], claim as unknown as Json),
  ];
}

/** `<pool>/<member id>`: what a Cluster's pool-member annotation says. */
export function poolMemberAnnotation(pool: string, id: string): string {
  return `${pool}/${id}`;
}

/** The pool and pooled cluster a {@link poolMemberAnnotation} names. */
export function parsePoolMemberAnnotation(value: string): { readonly pool: string; readonly member: string } {
  const slash = value.indexOf("/");
  return slash < 0
    ? { pool: value, member: "" }
    : { pool: value.slice(0, slash), member: value.slice(slash + 1) };
}
