/**
 * When a replica that has just created its membership Lease has seen the ring settle: the live members
 * it lists have stayed the same for a quiet window, or the bound since its Lease was created has passed.
 * Pure: time is an input (our own clock, as the ring reads it).
 *
 * Why: a replica that starts working believing it is alone takes every key, and hands most of them on
 * as its peers appear a moment later. Replicas started together (a Deployment scaled up, a rollout of
 * all pods) create their Leases seconds apart: process start, image pull and cache sync differ. Waiting
 * until no Lease has come or gone for a quiet window lets all of them see each other before any works,
 * so no key is handed over while the ring forms. A replica alone waits the quiet window once; a ring
 * that keeps changing (replicas arriving one after another, each within the window) makes it wait at
 * most the bound.
 *
 * Flow: the quiet window counts from the later of the last change of the members and the creation of
 * our Lease; each list that shows other members than the one before starts it again.
 *
 * Guarantees: replicas whose Leases are created one after another, each within `quietMs` of the one
 * before and all within `maxWaitMs` of the first, join knowing each other (a list begun after a Lease
 * was created shows it, and every replica lists again at least `quietMs` after the last Lease it saw
 * come). Caveats: the window only delays `joined`; it never lets a replica work where shard-view.ts
 * would not (the no-two-owners rule does not depend on it). A Lease that comes after the window has
 * closed is a replica joining an established ring: the keys it takes move to it.
 */
import type { LeaseTiming } from "../leadership/lease.ts";
import { sameMembers } from "./shard-view.ts";

/** How long a joining replica waits for the ring to settle. */
export interface SettleTiming {
  /** The live members must have stayed the same this long (ms) before the replica joins. */
  readonly quietMs: number;
  /** A replica joins at the latest this long (ms) after creating its Lease, settled or not. */
  readonly maxWaitMs: number;
}

/** Quiet windows per retry period: enough for peers started together to create their Leases and be listed. */
const QUIET_RETRY_PERIODS = 3;

/** The default for a ring's Lease timing: three retry periods of quiet (6 s by default), at most a lease duration (15 s). */
export function settleTimingFor(timing: LeaseTiming): SettleTiming {
  const quietMs = QUIET_RETRY_PERIODS * timing.retryPeriodMs;
  return { quietMs, maxWaitMs: Math.max(quietMs, timing.leaseDurationMs) };
}

/** Tracks, list after list, since when the live members have stayed the same. */
export class MembershipSettling {
  readonly #timing: SettleTiming;
  #members: readonly string[] | undefined;
  #since = 0;

  constructor(timing: SettleTiming) {
    this.#timing = timing;
  }

  /** Takes the live members (sorted) of a list begun at `at`; returns whether they changed. */
  observe(members: readonly string[], at: number): boolean {
    if (this.#members && sameMembers(this.#members, members)) return false;
    this.#members = members;
    this.#since = at;
    return true;
  }

  /** Since when (ms, our clock) the members have stayed the same; undefined before the first list. */
  get since(): number | undefined {
    return this.#members ? this.#since : undefined;
  }

  /**
   * Whether, by a list begun at `at`, a replica whose Lease was created at `createdAt` has seen the
   * ring settle: members unchanged for the quiet window, or the bound since `createdAt` passed.
   */
  settled(at: number, createdAt: number): boolean {
    if (!this.#members) return false;
    const quietSince = Math.max(this.#since, createdAt);
    return at - quietSince >= this.#timing.quietMs || at - createdAt >= this.#timing.maxWaitMs;
  }
}
