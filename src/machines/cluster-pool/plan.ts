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
 * - A sleeping pool (`spec.awake`) hibernates and wakes only unclaimed members, and records the change first
 *   (`Hibernating`, `Waking`), so a Cluster never claims a member the pool is about to put to sleep (see claim.ts:
 *   a Hibernating member is not claimable); a claimed member is its Cluster's to wake.
 */
import type { PoolMemberObservation, PoolMemberSpec } from "../../api/backend-contract.ts";
import type { ClusterPool, ClusterPoolStatus, PoolMember, PoolMemberPhase } from "../../api/cluster-pool.ts";
import { HIBERNATION_CONDITION, HIBERNATION_REASONS } from "../../api/constants/hibernation.ts";
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
  /** Whether the pool's backend can put clusters to sleep (contract 1.6), and why the last hibernate or wake failed. */
  readonly sleep?: SleepFacts;
  /** RFC 3339, for condition times. */
  readonly now: string;
}

/** What a sleeping pool's plan knows of its backend. */
export interface SleepFacts {
  /** The backend has hibernate and wake (contract 1.6). */
  readonly offered: boolean;
  /** Its name, for the condition that says it cannot. */
  readonly backend: string;
  /** Why the last hibernate or wake of a member failed, until one succeeds. */
  readonly error?: string;
}

/** What to record, then do. The runtime writes `status` first (guarded by resourceVersion), then the commands. */
export interface PoolPlan {
  readonly status: ClusterPoolStatus;
  readonly create: readonly PoolMemberSpec[];
  readonly delete: readonly string[];
  /** Unclaimed members to wake (recorded `Waking`), to keep `spec.awake` awake. */
  readonly wake: readonly string[];
  /** Unclaimed Ready members to put to sleep (recorded `Hibernating`), beyond `spec.awake`. */
  readonly hibernate: readonly string[];
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
  /** A hibernate or wake of a sleeping pool's member failed (the Hibernation condition). */
  sleepFailed: "SleepFailed",
} as const;

/** The member phase of each backend phase; the rest (being made, updated, deleted) is Provisioning. */
const PHASES: Partial<Record<string, PoolMemberPhase>> = {
  failed: "Failed",
  ready: "Ready",
  hibernating: "Hibernating",
  hibernated: "Hibernated",
  waking: "Waking",
};

const phaseOf = (observed: PoolMemberObservation): PoolMemberPhase | "Gone" => {
  const observation = observed.observation;
  if (!observation.exists) return "Gone";
  return PHASES[observation.phase] ?? "Provisioning";
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
  const commands: SleepCommands = { wake: [], hibernate: [] };
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
    result.push(...settleSleep(chosen, awakeWanted(pool, input.sleep), commands));
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
    wake: commands.wake,
    hibernate: commands.hibernate,
    drained: result.length === 0 && deletions.size === 0,
  };
}

/** The wakes and hibernates a plan orders. */
interface SleepCommands {
  readonly wake: string[];
  readonly hibernate: string[];
}

/**
 * How many of a version's idle members to keep awake: `spec.awake` (at most `idle`) where the backend can sleep;
 * every one where the pool does not ask for sleep. Undefined: sleep is not the pool's to touch (a backend that
 * cannot sleep holds no sleeping member, and is never asked).
 */
function awakeWanted(pool: ClusterPool, sleep: SleepFacts | undefined): number | undefined {
  if (!sleep?.offered) return undefined;
  const idle = Math.max(0, pool.spec.idle);
  return pool.spec.awake === undefined ? idle : Math.min(Math.max(0, pool.spec.awake), idle);
}

/** Awake or becoming so: a member that serves at once, or soon, without the pool's help. */
const isAwake = (member: PoolMember) => member.phase === "Ready" || member.phase === "Waking";

/**
 * One version's unclaimed members with their sleep settled toward `awake` awake: too few awake, the Hibernated
 * ones are woken (first in order first; a Hibernating one once it has gone to sleep); too many, the last Ready ones
 * are put to sleep (a Waking one once it is Ready; a Provisioning one is neither until it is Ready). The order of
 * the command is recorded in the member's phase.
 */
function settleSleep(
  members: readonly PoolMember[],
  awake: number | undefined,
  commands: SleepCommands,
): PoolMember[] {
  if (awake === undefined) return [...members];
  let count = members.filter(isAwake).length;
  const settled = [...members];
  for (let index = 0; index < settled.length && count < awake; index++) {
    const member = settled[index] as PoolMember;
    if (member.phase !== "Hibernated") continue;
    settled[index] = { ...member, phase: "Waking" };
    commands.wake.push(member.id);
    count++;
  }
  for (let index = settled.length - 1; index >= 0 && count > awake; index--) {
    const member = settled[index] as PoolMember;
    if (member.phase !== "Ready") continue;
    settled[index] = { ...member, phase: "Hibernating" };
    commands.hibernate.push(member.id);
    count--;
  }
  return settled;
}

/** How soon a member serves, highest first, so a shrink keeps what can serve soonest. */
const SERVES_SOON: Readonly<Record<PoolMemberPhase, number>> = {
  Ready: 5,
  Waking: 4,
  Hibernated: 3,
  Hibernating: 2,
  Provisioning: 1,
  Failed: 0,
};
const readiness = (member: PoolMember) => SERVES_SOON[member.phase];

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
  const unclaimed = (phase: PoolMemberPhase) =>
    members.filter((member) => !member.claimedBy && member.phase === phase).length;
  const idle = unclaimed("Ready");
  const asleep = unclaimed("Hibernated");
  const hibernating = unclaimed("Hibernating");
  const waking = unclaimed("Waking");
  const binding = members.filter((member) => member.claimedBy).length;
  const refilling = unclaimed("Provisioning");
  const wanted = Math.max(0, pool.spec.idle) * input.versions.length;
  const wantedAwake = (awakeWanted(pool, input.sleep) ?? Math.max(0, pool.spec.idle)) * input.versions.length;
  const sleeping = asleep + hibernating + waking;
  const versions = input.versions.join(", ") || "(none)";
  const ready: ConditionUpdate = input.problem
    ? { type: POOL_CONDITIONS.ready, status: "False", ...input.problem }
    : idle >= wantedAwake && idle + sleeping >= wanted
      ? {
          type: POOL_CONDITIONS.ready,
          status: "True",
          reason: POOL_REASONS.full,
          message:
            sleeping > 0
              ? `${idle} awake and ${sleeping} sleeping idle cluster(s) of Kubernetes ${versions}`
              : `${idle} idle cluster(s) of Kubernetes ${versions}`,
        }
      : {
          type: POOL_CONDITIONS.ready,
          status: "False",
          reason: POOL_REASONS.refilling,
          message:
            wantedAwake < wanted
              ? `${idle} of ${wantedAwake} awake idle cluster(s) ready (${waking} waking), ${asleep + hibernating} asleep, ${refilling} being made`
              : `${idle} of ${wanted} idle cluster(s) ready, ${refilling + sleeping} being made${sleeping > 0 ? " or woken" : ""}`,
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
  const hibernation = hibernationCondition(input, { idle, asleep, hibernating, waking });
  return {
    observedGeneration: pool.metadata.generation ?? 0,
    idle,
    ...(sleeping > 0 || pool.spec.awake !== undefined ? { asleep, hibernating, waking } : {}),
    binding,
    refilling,
    members,
    conditions: mergeConditions(
      pool.status?.conditions,
      [ready, refilled, ...(hibernation ? [hibernation] : [])],
      pool.metadata.generation ?? 0,
      input.now,
    ),
  };
}

/**
 * The Hibernation condition of a pool that asks for sleep (`spec.awake`), or once asked (conditions are never
 * deleted): False when its backend cannot sleep (every idle cluster stays awake) or a hibernate or wake failed.
 */
function hibernationCondition(
  input: PoolPlanInput,
  counts: { idle: number; asleep: number; hibernating: number; waking: number },
): ConditionUpdate | undefined {
  const { pool, sleep } = input;
  const asked = pool.spec.awake !== undefined;
  const shown = pool.status?.conditions?.some((condition) => condition.type === HIBERNATION_CONDITION);
  if (!asked && !shown) return undefined;
  const type = HIBERNATION_CONDITION;
  if (!asked)
    return {
      type,
      status: "True",
      reason: HIBERNATION_REASONS.Awake,
      message: "spec.awake is not set: every idle cluster is kept awake",
    };
  if (!sleep?.offered)
    return {
      type,
      status: "False",
      reason: HIBERNATION_REASONS.HibernationNotOffered,
      message: `backend ${sleep?.backend ?? "(unknown)"} cannot put clusters to sleep (contract 1.6): every idle cluster stays awake`,
    };
  if (sleep.error)
    return {
      type,
      status: "False",
      reason: POOL_REASONS.sleepFailed,
      message: `putting pool clusters to sleep or waking them failed: ${sleep.error}`,
    };
  return {
    type,
    status: "True",
    reason: HIBERNATION_REASONS.Hibernated,
    message: `${counts.idle} awake, ${counts.waking} waking, ${counts.hibernating} going to sleep, ${counts.asleep} asleep (spec.awake: ${pool.spec.awake} per version)`,
  };
}
