/**
 * Which pool member a new Cluster may take, and the claim that records it. Pure.
 *
 * A Cluster takes a member only before anything was made for it (no finalizer of ours, nothing at the backend
 * under its uid), so it never ends up with two clusters; the claim goes into the pool's status with a test on
 * the member's entry (and the runtime's test on resourceVersion), so two Clusters never claim one member.
 *
 * In a sleeping pool a Cluster takes an awake member first (Ready at once), else one waking, else one asleep (its
 * machine wakes it; it is Ready once the wake is done). Never one the pool is putting to sleep (Hibernating): the
 * pool's hibernate may still be on its way, and would stop the cluster under the Cluster that took it.
 */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterPool, PoolClaim, PoolMember, PoolMemberPhase } from "../../api/cluster-pool.ts";
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

/** Member phases a Cluster may claim, best first: awake, waking, asleep. */
export const CLAIMABLE_PHASES: readonly PoolMemberPhase[] = ["Ready", "Waking", "Hibernated"];

/** Whether `member` may be claimed now: unclaimed and awake, waking or asleep. */
export const isClaimable = (member: PoolMember): boolean =>
  !member.claimedBy && CLAIMABLE_PHASES.includes(member.phase);

/**
 * An idle member of `version` in one of `pools` (of the Cluster's ProviderConfig): an awake one of any pool
 * first, else a waking one, else one asleep; first pool first. `awakeOnly`: a Ready one or none (for a Cluster
 * that asks to sleep: its machine wakes a sleeping cluster it is given, and sends an awake one to sleep).
 */
export function idleMember(
  pools: readonly ClusterPool[],
  providerConfig: string,
  version: string,
  awakeOnly = false,
): { readonly pool: ClusterPool; readonly index: number; readonly member: PoolMember } | undefined {
  for (const phase of awakeOnly ? CLAIMABLE_PHASES.slice(0, 1) : CLAIMABLE_PHASES) {
    for (const pool of pools) {
      if (pool.spec.providerConfig !== providerConfig || pool.metadata.deletionTimestamp !== undefined)
        continue;
      const members = pool.status?.members ?? [];
      const index = members.findIndex(
        (member) => !member.claimedBy && member.phase === phase && member.version === version,
      );
      const member = members[index];
      if (member) return { pool, index, member };
    }
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
