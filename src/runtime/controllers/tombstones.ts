/** The UIDs of resources that went away, remembered for a while: steps reported after a removal are late, not new. */

/**
 * A bounded set of removed UIDs. A reconcile that removed the last finalizer reports its steps after the
 * watch may already have reported the object deleted; observers use this to tell such a late step from
 * a new resource (a UID is never reused, so a removed one never comes back).
 */
export class Tombstones {
  readonly #capacity: number;
  readonly #uids = new Set<string>();

  /** Remembers at most `capacity` UIDs, forgetting the oldest first. */
  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  add(uid: string): void {
    this.#uids.delete(uid);
    this.#uids.add(uid);
    if (this.#uids.size > this.#capacity) {
      const oldest = this.#uids.values().next().value;
      if (oldest !== undefined) this.#uids.delete(oldest);
    }
  }

  has(uid: string): boolean {
    return this.#uids.has(uid);
  }
}
