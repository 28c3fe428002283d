/**
 * Rendezvous (highest-random-weight) hashing: every key belongs to the member with the highest
 * weight(member, key). It is a consistent hash without a ring to keep: every replica that knows the
 * same members computes the same owner, and a member joining or leaving moves only the keys it takes
 * or leaves (about 1/N), never keys between the others. Pure.
 */

/** FNV-1a over UTF-16 code units: a fast 32-bit string hash. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** MurmurHash3's finalizer: every input bit flips about half the output bits. */
function mix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A member's weight for a key, 0 … 2³²−1. */
export function weight(member: string, key: string): number {
  return mix(mix(fnv1a(key)) ^ mix(fnv1a(member)));
}

/** The member that owns `key` among `members` (ties, vanishingly rare, go to the smaller name); undefined if none. */
export function ownerOf(key: string, members: Iterable<string>): string | undefined {
  const keyHash = mix(fnv1a(key));
  let owner: string | undefined;
  let best = -1;
  for (const member of members) {
    const w = mix(keyHash ^ mix(fnv1a(member)));
    if (w > best || (w === best && owner !== undefined && member < owner)) {
      owner = member;
      best = w;
    }
  }
  return owner;
}
