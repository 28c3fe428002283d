/**
 * The pure plan of one ClusterPool reconcile: from the pool as recorded, what its backend holds and whether the
 * Clusters that claimed members still exist, the members to record, make and delete. No I/O, no clock, no
 * randomness (fresh member ids come in as input).
 *
 * Guarantees (the property test checks them under a crash between any two writes):
 * - A member named in a claim is never deleted while its Cluster may still bind it, and never given to
 *   another: only the claiming Cluster's disappearance releases it (then it is deleted, bound or not).
 * - An unclaimed member leaves the record before it is deleted at the backend, so no Cluster claims one on its
 *   way out; a member the backend holds but the record lacks (a crash between the two) is adopted or deleted.
 * - A member bound at the backend to a Cluster that holds it (our finalizer on it) is that Cluster's cluster: the
 *   plan forgets it and never deletes it.
 */
import type { PoolMemberObservation, PoolMemberSpec } from "../../api/backend-contract.ts";
import type { ClusterPool, ClusterPoolStatus, PoolMember, PoolMemberPhase } from "../../api/cluster-pool.ts";
import { type ConditionUpdate, mergeConditions } from "../shared/conditions.ts";

/** How the Cluster that claimed a member stands. */
export type ClaimerState =
  /** It exists and holds our finalizer: it was bound, and its deletion deletes the member. */
  | "holds"
  /** It exists without our finalizer yet: the binding is in progress. */
  | "binding"
  /** It is gone (or another object of its name stands there). */
  | "gone";

/** Everything one plan needs; all of it data. */
export interface PoolPlanInput {
  readonly pool: ClusterPool;
  /** The Kubernetes versions wanted; empty when the pool is being deleted, its config is gone or offers no default. */
  readonly versions: readonly string[];
  /** What the backend holds for the pool (bound members too). */
  readonly backend: readonly PoolMemberObservation[];
  /** By claiming Cluster uid. A uid missing here counts as "binding" (never released on a guess). */
  readonly claimers: ReadonlyMap<string, ClaimerState>;
  /** Ids for members to make, used in order. */
  readonly freshIds: readonly string[];
  /** Why making members failed last time, if it did. */
  readonly refillError?: string;
  /** Why the pool cannot be served (config missing, no version), for its Ready condition. */
  readonly problem?: { readonly reason: string; readonly message: string };
  /** RFC 3339, for condition times. */
  readonly now: string;
}

/** What to record, then do. The runtime writes `status` first (guarded by resourceVersion), then the commands. */
export interface PoolPlan {
  readonly status: ClusterPoolStatus;
  readonly create: readonly PoolMemberSpec[];
  readonly delete: readonly string[];
  /** Nothing of the pool is left: no member recorded, none to delete (a deleted pool may let go). */
  readonly drained: boolean;
}

/** Condition types of a ClusterPool. */
export const POOL_CONDITIONS = { ready: "Ready", refilled: "Refilled" } as const;

/** Reasons of those conditions. */
export const POOL_REASONS = {
  full: "PoolFull",
  refilling: "Refilling",
  refillFailed: "RefillFailed",
  refilled: "Refilled",
} as const;

const phaseOf = (observed: PoolMemberObservation): PoolMemberPhase | "Gone" => {
  const observation = observed.observation;
  if (!observation.exists) return "Gone";
  if (observation.phase === "failed") return "Failed";
  return observation.phase === "ready" ? "Ready" : "Provisioning";
};

/** Plans one reconcile of a pool; see the file's guarantees. */
export function planPool(input: PoolPlanInput): PoolPlan {
  const { pool, versions } = input;
  const backend = new Map(input.backend.map((member) => [member.id, member]));
  const recorded = pool.status?.members ?? [];
  const kept: PoolMember[] = [];
  const deletions = new Set<string>();
  const failures: string[] = [];

  for (const member of recorded) {
    const observed = backend.get(member.id);
    backend.delete(member.id);
    const phase = observed ? phaseOf(observed) : "Gone";
    if (member.claimedBy) {
      const claimer = input.claimers.get(member.claimedBy.uid) ?? "binding";
      if (claimer === "gone") {
        // Released by its Cluster's going: delete it (bound or not); the claim stays until it is gone.
        if (phase === "Gone") continue;
        deletions.add(member.id);
        kept.push(member);
      } else if (claimer === "binding" && observed) {
        kept.push(phase === "Gone" || phase === member.phase ? member : { ...member, phase });
      }
      // A member the backend lost releases its claim: the Cluster, which has nothing yet, is served anew.
      // "holds": the Cluster's own cluster now; the record lets go of it.
      continue;
    }
    if (phase === "Gone") {
      if (observed) deletions.add(member.id); // its records, at least
      continue;
    }
    if (phase === "Failed") {
      failures.push(failureOf(observed));
      deletions.add(member.id);
      continue;
    }
    kept.push(phase === member.phase ? member : { ...member, phase });
  }

  // Members the record lacks: bound ones are their Clusters'; unbound ones are adopted where wanted.
  const strays = [...backend.values()].filter((member) => member.boundTo === undefined);

  const result: PoolMember[] = kept.filter((member) => member.claimedBy);
  const idle = Math.max(0, pool.spec.idle);
  const maximum = pool.spec.maximum ?? 2 * idle * Math.max(1, versions.length);
  const creations: PoolMemberSpec[] = [];
  let fresh = 0;
  for (const version of versions) {
    const unclaimed = kept
      .filter((member) => !member.claimedBy && member.version === version)
      .sort((a, b) => readiness(b) - readiness(a));
    const adoptable = strays.filter(
      (member) => member.version === version && phaseOf(member) !== "Failed" && phaseOf(member) !== "Gone",
    );
    const chosen = [
      ...unclaimed,
      ...adoptable.map(
        (member): PoolMember => ({ id: member.id, version, phase: phaseOf(member) as PoolMemberPhase }),
      ),
    ].slice(0, idle);
    result.push(...chosen);
    // Without refill the pool fills once per spec change (its first plan of a generation), then only serves.
    if (pool.spec.refill === false && pool.status?.observedGeneration === pool.metadata.generation) continue;
    while (chosen.length + creations.filter((c) => c.version === version).length < idle) {
      if (result.length >= maximum) break;
      const id = input.freshIds[fresh++];
      if (id === undefined) break;
      creations.push({ id, pool: pool.metadata.name ?? "", version });
      result.push({ id, version, phase: "Provisioning" });
    }
  }
  const keptIds = new Set(result.map((member) => member.id));
  for (const member of kept) if (!keptIds.has(member.id)) deletions.add(member.id);
  for (const member of strays) if (!keptIds.has(member.id)) deletions.add(member.id);

  const status = poolStatus(input, result, failures);
  return {
    status,
    create: creations,
    delete: [...deletions],
    drained: result.length === 0 && deletions.size === 0,
  };
}

/** Ready members first, so a shrink keeps what can serve at once. */
const readiness = (member: PoolMember) => (member.phase === "Ready" ? 1 : 0);

function failureOf(observed: PoolMemberObservation | undefined): string {
  const observation = observed?.observation;
  const why = observation?.exists ? observation.message : undefined;
  return `pool cluster ${observed?.id ?? "?"} failed${why ? `: ${why}` : ""}`;
}

function poolStatus(
  input: PoolPlanInput,
  members: readonly PoolMember[],
  failures: readonly string[],
): ClusterPoolStatus {
  const { pool } = input;
  const idle = members.filter((member) => !member.claimedBy && member.phase === "Ready").length;
  const binding = members.filter((member) => member.claimedBy).length;
  const refilling = members.filter((member) => !member.claimedBy && member.phase !== "Ready").length;
  const wanted = Math.max(0, pool.spec.idle) * input.versions.length;
  const ready: ConditionUpdate = input.problem
    ? { type: POOL_CONDITIONS.ready, status: "False", ...input.problem }
    : idle >= wanted
      ? {
          type: POOL_CONDITIONS.ready,
          status: "True",
          reason: POOL_REASONS.full,
          message: `${idle} idle cluster(s) of Kubernetes ${input.versions.join(", ") || "(none)"}`,
        }
      : {
          type: POOL_CONDITIONS.ready,
          status: "False",
          reason: POOL_REASONS.refilling,
          message: `${idle} of ${wanted} idle cluster(s) ready, ${refilling} being made`,
        };
  const problems = [...(input.refillError ? [input.refillError] : []), ...failures];
  const refilled: ConditionUpdate =
    problems.length > 0
      ? {
          type: POOL_CONDITIONS.refilled,
          status: "False",
          reason: POOL_REASONS.refillFailed,
          message: `making pool clusters failed: ${problems.join("; ")}`,
        }
      : {
          type: POOL_CONDITIONS.refilled,
          status: "True",
          reason: POOL_REASONS.refilled,
          message: "pool clusters are made as needed",
        };
  return {
    observedGeneration: pool.metadata.generation ?? 0,
    idle,
    binding,
    refilling,
    members,
    conditions: mergeConditions(
      pool.status?.conditions,
      [ready, refilled],
      pool.metadata.generation ?? 0,
      input.now,
    ),
  };
}
