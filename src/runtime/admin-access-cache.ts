/**
 * One engine-wide memory of the backends' admin access per cluster, so that a backend is asked at most once per
 * rotation window, whichever kind asks (AccessRequest, EngineControlPlane): on Gardener every call mints a new
 * credential.
 *
 * Flow: `get(target, maxAgeMs)` answers from memory while the entry is younger than `maxAgeMs` (the caller's
 * rotation window, its kind's `resyncMs`), else asks the backend; callers who ask for one cluster while the
 * backend is being asked share that one call.
 *
 * Guarantees: memory only (a restart asks again; a credential is never written anywhere by it); keyed by the
 * target's uid (a Cluster's, or an EngineControlPlane's), so a re-created object is asked anew; no answer
 * (`undefined`: not ready) and no failure is remembered; `forget` drops an entry (its object was deleted, or its
 * credential was refused with 401), and an answer asked before a `forget` is not stored after it.
 */
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { AdminAccess, ClusterBackend } from "../api/backend-contract.ts";
import type { Clock } from "./clock.ts";

/** What {@link AdminAccessCache} needs. */
export interface AdminAccessCacheProps {
  readonly backend: ClusterBackend;
  readonly clock: Clock;
}

interface Entry {
  readonly access: AdminAccess;
  readonly readAt: number;
}

/** The engine's admin access per cluster uid; see the file's summary. */
export class AdminAccessCache {
  readonly #props: AdminAccessCacheProps;
  readonly #entries = new Map<string, Entry>();
  /** Calls of the backend under way, by uid; `forget` drops one, so its answer is not stored. */
  readonly #asking = new Map<string, Promise<AdminAccess | undefined>>();

  constructor(props: AdminAccessCacheProps) {
    this.#props = props;
  }

  /**
   * The admin access to `target`: remembered if read less than `maxAgeMs` ago, else the backend's answer now
   * (given `observed`, the caller's observation of the cluster moments ago, so the backend need not observe again).
   */
  get(
    target: ClusterTarget,
    maxAgeMs: number,
    observed?: ClusterObservation,
  ): Promise<AdminAccess | undefined> {
    const { backend, clock } = this.#props;
    const uid = target.uid;
    const known = this.#entries.get(uid);
    if (known && clock.now() - known.readAt < maxAgeMs) return Promise.resolve(known.access);
    const asking = this.#asking.get(uid);
    if (asking) return asking;
    const call: Promise<AdminAccess | undefined> = backend
      .adminAccess(target, observed)
      .then((access) => {
        if (this.#asking.get(uid) !== call) return access; // forgotten meanwhile: not stored
        if (access) this.#entries.set(uid, { access, readAt: clock.now() });
        else this.#entries.delete(uid);
        return access;
      })
      .finally(() => {
        if (this.#asking.get(uid) === call) this.#asking.delete(uid);
      });
    this.#asking.set(uid, call);
    return call;
  }

  /** Drops what is known of `uid`: its object is gone, or its credential no longer works. */
  forget(uid: string): void {
    this.#entries.delete(uid);
    this.#asking.delete(uid);
  }

  /** How many clusters it remembers (for tests). */
  get size(): number {
    return this.#entries.size;
  }
}
