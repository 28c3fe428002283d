/**
 * Membership of a shard ring, read from the replicas' Leases: which peers are live (by our own clock:
 * a record that has not changed for its lease duration is gone) and which members each has acknowledged.
 * No I/O: the ring lists the Leases and hands them here.
 */
import { SHARD_LEASE_ANNOTATIONS } from "../../api/constants/shard-lease.ts";
import { type Lease, recordOf } from "../leadership/lease.ts";

/** The name of a replica's membership Lease: `<ring>-shard-<identity>`, made a valid object name. */
export function memberLeaseName(ring: string, identity: string): string {
  const safe = identity
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  return `${ring}-shard-${safe}`.slice(0, 253);
}

/** The members a Lease's holder has acknowledged, sorted. */
export function acknowledgedIn(lease: Lease): string[] {
  const text = lease.metadata.annotations?.[SHARD_LEASE_ANNOTATIONS.shardMembers] ?? "";
  return text
    .split(",")
    .filter((member) => member !== "")
    .sort();
}

/** The annotation value for a list of members. */
export function acknowledgedAnnotation(members: readonly string[]): string {
  return [...members].sort().join(",");
}

/** A peer as last listed. */
export interface Peer {
  readonly identity: string;
  readonly lease: Lease;
  /** Members it has acknowledged. */
  readonly acknowledged: readonly string[];
  /** Whether its Lease is held and changed within its lease duration (by our clock). */
  readonly live: boolean;
  /** How long (ms, our clock) its record has stayed the same. */
  readonly unchangedForMs: number;
}

/** Tracks when each peer Lease last changed, across lists. */
export class LeaseObservations {
  readonly #self: string;
  readonly #since = new Map<string, { readonly record: string; readonly at: number }>();

  constructor(self: string) {
    this.#self = self;
  }

  /** Takes a complete list of the ring's Leases made at `now`; returns every peer (ours left out). */
  update(leases: readonly Lease[], now: number, defaultDurationMs: number): Peer[] {
    const seen = new Set<string>();
    const peers: Peer[] = [];
    for (const lease of leases) {
      const identity = lease.spec?.holderIdentity ?? "";
      if (identity === this.#self) continue;
      const name = lease.metadata.name;
      seen.add(name);
      const record = recordOf(lease);
      let since = this.#since.get(name);
      if (since?.record !== record) {
        since = { record, at: now };
        this.#since.set(name, since);
      }
      const durationMs = (lease.spec?.leaseDurationSeconds ?? 0) * 1_000 || defaultDurationMs;
      const unchangedForMs = now - since.at;
      peers.push({
        identity,
        lease,
        acknowledged: acknowledgedIn(lease),
        live: identity !== "" && unchangedForMs <= durationMs,
        unchangedForMs,
      });
    }
    for (const name of [...this.#since.keys()]) if (!seen.has(name)) this.#since.delete(name);
    return peers;
  }
}

/**
 * The live members by wall-clock time, for a one-shot reader such as `explain` that has not watched the
 * Leases change: a Lease renewed within its duration of `now`.
 */
export function liveMembersAt(leases: readonly Lease[], now: number): string[] {
  return leases
    .filter((lease) => {
      const identity = lease.spec?.holderIdentity;
      const renewed = Date.parse(lease.spec?.renewTime ?? "");
      const durationMs = (lease.spec?.leaseDurationSeconds ?? 0) * 1_000;
      return Boolean(identity) && Number.isFinite(renewed) && now - renewed <= durationMs;
    })
    .map((lease) => lease.spec?.holderIdentity as string)
    .sort();
}
