/**
 * What one replica knows of the ring, and from it which keys it may work on. Pure.
 *
 * Every member publishes in its Lease the members it works by (its *acknowledged* view) and publishes
 * a new one only after finishing its work on the keys that view takes from it. A member works on a
 * key only if it owns it both by its acknowledged view and by the live members it sees now, and every
 * live peer has acknowledged it: then no peer owns the key by the view it works by (we beat every
 * member we see, and its view holds us). So a key moves only once its previous owner has let go of it
 * (acknowledged the new member, released its Lease, or let it expire), and two replicas never work on
 * one key at once.
 *
 * A replica that has just created its Lease works on nothing until a list of the ring shows that Lease
 * (`joined`): the list it made before creating it may miss a peer creating its own at the same moment,
 * and that peer's may miss ours, so both would believe they are alone. A list that shows our Lease began
 * after it existed (lists are consistent reads), so it shows every peer whose Lease was created before
 * ours; a peer created after ours sees ours in its own such list. Of two replicas joining together at
 * least one therefore sees the other, and waits until the other has acknowledged it. The ring also
 * holds `joined` back until the members it lists have settled (settling.ts), so that replicas started
 * seconds apart all see each other before any works, and no key moves while the ring forms; that wait
 * only delays work, the rules here do not depend on it.
 */
import { ownerOf } from "./rendezvous.ts";

export interface ShardView {
  /** This replica's identity. */
  readonly self: string;
  /** Whether this replica holds its Lease (created, and renewed within the deadline); if not, no work at all. */
  readonly healthy: boolean;
  /** Whether a list of the ring has shown this replica's own Lease (every peer created before it is in `members`), and the ring has settled. */
  readonly joined: boolean;
  /** Live members as this replica sees them, itself included, sorted. */
  readonly members: readonly string[];
  /** The members this replica has published that it works by. */
  readonly acknowledged: readonly string[];
  /** Each live peer's acknowledged view, as last read from its Lease. */
  readonly peers: ReadonlyMap<string, readonly string[]>;
}

/** A replica that has not joined yet: no work. */
export function notJoined(self: string): ShardView {
  return { self, healthy: false, joined: false, members: [self], acknowledged: [], peers: new Map() };
}

/** Whether this replica may start work on `key` now. */
export function mayWork(view: ShardView, key: string): boolean {
  if (!view.healthy) return false;
  if (!view.joined) return false; // peers creating their Leases with ours may not be in our view yet
  if (ownerOf(key, view.acknowledged) !== view.self) return false;
  if (ownerOf(key, view.members) !== view.self) return false; // leaving us: finish, do not start
  // We beat every live peer for the key (just above); one whose acknowledged view holds us cannot own it
  // by that view, and one whose view does not may still work on what is now ours.
  for (const acknowledged of view.peers.values()) if (!acknowledged.includes(view.self)) return false;
  return true;
}

/** Who owns `key` by the live members this replica sees (for metrics, logs and `explain`). */
export function ownerIn(view: ShardView, key: string): string | undefined {
  return ownerOf(key, view.members);
}

/**
 * Whether this replica may acknowledge its live members now: no work in flight on a key it owns by
 * its acknowledged view but not by the live members (work the new view takes away from it).
 */
export function mayAcknowledge(view: ShardView, inFlight: Iterable<string>): boolean {
  for (const key of inFlight) {
    if (ownerOf(key, view.acknowledged) === view.self && ownerOf(key, view.members) !== view.self)
      return false;
  }
  return true;
}

/** Whether two lists of members are the same (both sorted). */
export function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((member, i) => member === b[i]);
}

/** Whether two views allow the same work (what listeners care about). */
export function sameView(a: ShardView, b: ShardView): boolean {
  if (a.healthy !== b.healthy || a.joined !== b.joined || a.self !== b.self) return false;
  if (!sameMembers(a.members, b.members) || !sameMembers(a.acknowledged, b.acknowledged)) return false;
  if (a.peers.size !== b.peers.size) return false;
  for (const [peer, acknowledged] of a.peers) {
    const other = b.peers.get(peer);
    if (!other || !sameMembers(acknowledged, other)) return false;
  }
  return true;
}
