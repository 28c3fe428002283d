/**
 * The warm pools (contract 1.5) of a backend whose members are clusters of its own, made under the member's id and
 * bound through a {@link PoolLedger}: the member is recorded before its cluster is made (a crash in between leaves a
 * member the pool finds), listed with the backend's observation of it, bound by a ledger record, deleted as a cluster.
 */
import type { ClusterObservation } from "../../api/backend.ts";
import type { ClusterBackend, PoolMemberObservation, PoolSupport } from "../../api/backend-contract.ts";
import { poolMemberTarget } from "../../api/cluster-pool.ts";
import type { PoolLedger } from "./pool-ledger.ts";

/** What the pools need of the backend. */
export interface LedgerPoolsProps {
  /** The backend itself: its members are made, observed and deleted as its clusters, its name is in errors. */
  readonly backend: Pick<ClusterBackend, "name" | "create" | "observe" | "delete">;
  readonly ledger: PoolLedger;
  /** Whether member `id` is on its way out (no pool lists it then). */
  leaving(id: string, observation: ClusterObservation): boolean;
}

/** The {@link PoolSupport} of such a backend. */
export function ledgerPools(props: LedgerPoolsProps): PoolSupport {
  // The backend's methods are looked up at each call, never bound here: a wrapper put on them later is used too.
  const { backend, ledger } = props;
  return {
    createMember: async (member, target) => {
      ledger.addMember(member); // first: a crash before the create leaves a member the pool finds
      await backend.create({ ...target, uid: member.id, name: member.id }, member.version);
    },
    listMembers: async (pool) => {
      const listed: PoolMemberObservation[] = [];
      for (const member of ledger.members(pool)) {
        const observation = await backend.observe(poolMemberTarget(member.id));
        if (!props.leaving(member.id, observation)) listed.push({ ...member, observation });
      }
      return listed;
    },
    bind: async (id, target) => {
      if (!ledger.member(id)) throw new Error(`${backend.name} backend: no pool member ${id}`);
      ledger.bind(target.uid, id);
    },
    deleteMember: (id) => backend.delete(poolMemberTarget(id)),
  };
}
