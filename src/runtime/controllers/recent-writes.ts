/**
 * Objects this engine wrote a moment ago, which its caches may not show yet (a watch event is on its
 * way). A controller that decides from its caches reads through this, so it never acts twice on one
 * change: e.g. never creates a second Cluster for a request whose first one is not cached yet.
 * (controller-runtime's "expectations" serve the same purpose.)
 */
import type { Clock } from "../clock.ts";
import type { WatchedObject } from "../informer.ts";

/** How long a remembered write may shadow the cache at most. */
const DEFAULT_TTL_MS = 10_000;

interface Remembered<T> {
  /** The object as the API server returned it, or undefined when we deleted it. */
  readonly object: T | undefined;
  readonly resourceVersion: string | undefined;
  readonly at: number;
}

/** Recent writes of one kind, by key (`namespace/name` or `name`). */
export class RecentWrites<T extends WatchedObject> {
  readonly #entries = new Map<string, Remembered<T>>();
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(clock: Clock, ttlMs = DEFAULT_TTL_MS) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /** Remembers what was written (the API server's answer), or that the object was deleted. */
  wrote(key: string, object: T | undefined, deletedVersion?: string): void {
    this.#entries.set(key, {
      object,
      resourceVersion: object?.metadata?.resourceVersion ?? deletedVersion,
      at: this.#clock.now(),
    });
  }

  /** The object as it is now to our best knowledge: the remembered write while the cache lags behind it. */
  get(key: string, cached: T | undefined): T | undefined {
    const entry = this.#current(key, cached);
    return entry ? entry.object : cached;
  }

  /**
   * Whether `object` is the echo of our last write of `key` (the same resourceVersion, within the TTL).
   * True once per write: a later event with that version (a resync) is not an echo any more.
   */
  takeEcho(key: string, object: T): boolean {
    const entry = this.#entries.get(key);
    const version = object.metadata?.resourceVersion;
    if (!entry || version === undefined || entry.resourceVersion !== version) return false;
    this.#entries.delete(key);
    return this.#clock.now() - entry.at <= this.#ttlMs;
  }

  /** `cached` with every remembered write laid over it (deleted ones left out, new ones added). */
  overlay(cached: readonly T[], keyOf: (object: T) => string): T[] {
    if (this.#entries.size === 0) return [...cached];
    const seen = new Set<string>();
    const result: T[] = [];
    for (const object of cached) {
      const key = keyOf(object);
      seen.add(key);
      const current = this.get(key, object);
      if (current) result.push(current);
    }
    for (const [key, entry] of [...this.#entries]) {
      if (seen.has(key) || !this.#current(key, undefined)) continue;
      if (entry.object) result.push(entry.object);
    }
    return result;
  }

  /** The entry while it is newer than the cache and young enough; forgotten otherwise. */
  #current(key: string, cached: T | undefined): Remembered<T> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const expired = this.#clock.now() - entry.at > this.#ttlMs;
    if (expired || caughtUp(cached?.metadata?.resourceVersion, entry)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

/**
 * Whether the cache shows the remembered write or a later one. resourceVersions are opaque, but etcd's
 * are increasing integers; where both parse as integers they are compared, else only equality counts.
 */
function caughtUp(cachedVersion: string | undefined, entry: Remembered<unknown>): boolean {
  if (cachedVersion === undefined) return false;
  if (cachedVersion === entry.resourceVersion) return true;
  const cached = Number(cachedVersion);
  const remembered = Number(entry.resourceVersion);
  return Number.isSafeInteger(cached) && Number.isSafeInteger(remembered) && cached > remembered;
}
