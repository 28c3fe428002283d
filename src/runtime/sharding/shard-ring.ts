/**
 * Sharded mode: this replica's membership in a ring of replicas, kept on the API server with one Lease
 * per replica (no other database, no consensus of our own), and the gate every controller asks before
 * it starts work on a key.
 */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { SHARD_LEASE_ANNOTATIONS, SHARD_LEASE_LABELS } from "../../api/constants/shard-lease.ts";
import { isConflict, isNotFound } from "../../api/error-message.ts";
import { type Clock, systemClock, type TimerHandle } from "../clock.ts";
import {
  createLease,
  DEFAULT_LEASE_TIMING,
  deleteLease,
  handBackLease,
  LEASES,
  type Lease,
  type LeaseTiming,
  microTime,
  readLease,
  replaceLease,
} from "../leadership/lease.ts";
import { apiStatusOf, errorMessage, type Logger, silentLogger } from "../logger.ts";
import { acknowledgedAnnotation, LeaseObservations, memberLeaseName } from "./membership.ts";
import { MembershipSettling, type SettleTiming, settleTimingFor } from "./settling.ts";
import {
  mayAcknowledge,
  mayWork,
  notJoined,
  ownerIn,
  type ShardView,
  sameMembers,
  sameView,
} from "./shard-view.ts";

/** Where the ring lives and who we are. */
export interface ShardRingOptions {
  readonly kubeConfig: KubeConfig;
  /** Namespace of the membership Leases. */
  readonly namespace: string;
  /** The ring's name (the provider's name): replicas of one provider form one ring. */
  readonly ring: string;
  /** Unique per replica process, e.g. the pod name with a random suffix. */
  readonly identity: string;
  readonly timing?: LeaseTiming;
  /** How long a joining replica waits for the ring to settle (default: {@link settleTimingFor} the timing). */
  readonly settle?: SettleTiming;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Called once if this replica could not renew its Lease within the deadline; it has stopped working. */
  readonly onLost: () => void;
}

/** Told when what this replica may work on changed, with the view before and after. */
export type ShardListener = (before: ShardView, after: ShardView) => void;

/** Peers whose Lease has not changed for this many lease durations are deleted (replicas that died unreleased). */
const FORGET_AFTER_DURATIONS = 4;

/**
 * Flow, every retry period: list the ring's Leases → peers whose record stayed the same for a lease
 * duration (our clock) or that are gone or released drop out, new ones join → until a list begun at
 * least a retry period after we created our Lease shows it, and the live members have stayed the same
 * for the settle window (settling.ts; at most its bound after the create), we are not joined and start
 * nothing (shard-view.ts: a list made before our Lease existed may miss a peer starting with us; the
 * settle window lets replicas started together all see each other first, so no key moves while the
 * ring forms) → the gate stops starting keys that leave us → once no work on them is in flight, our Lease
 * is renewed with the live members as our acknowledged view (else renewed with the old one) → keys
 * that became ours are handed to the controllers. Only a list that succeeded changes the members, so an API outage never makes peers
 * look dead to us while we still work.
 *
 * Guarantees (see shard-view.ts): no key is worked on by two replicas at once; a replica whose renewals
 * fail stops starting work at the renew deadline, before its Lease can expire for the others, and is
 * told to exit (`onLost`); `release()` after the last reconcile hands its keys over at once.
 */
export class ShardRing {
  readonly identity: string;
  readonly #options: ShardRingOptions;
  readonly #api: CustomObjectsApi;
  readonly #clock: Clock;
  readonly #timing: LeaseTiming;
  readonly #log: Logger;
  readonly #leaseName: string;
  readonly #observations: LeaseObservations;
  readonly #settle: SettleTiming;
  readonly #settling: MembershipSettling;
  readonly #listeners: ShardListener[] = [];
  /** Keys with work in flight, counted (two controllers may work on one key). */
  readonly #inFlight = new Map<string, number>();
  #view: ShardView;
  /** Our Lease as last written. */
  #lease: Lease | undefined;
  /** When (our clock) the last successful renewal was sent. */
  #renewedAt: number | undefined;
  /** When (our clock) our Lease was last created: a list begun a retry period later makes us joined. */
  #createdAt: number | undefined;
  /** Whether the ring has settled since our Lease was last created (then it stays so). */
  #settled = false;
  #timer: TimerHandle | undefined;
  #deadline: TimerHandle | undefined;
  #ticking: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #lost = false;

  constructor(options: ShardRingOptions) {
    this.#options = options;
    this.identity = options.identity;
    this.#api = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#clock = options.clock ?? systemClock;
    this.#timing = options.timing ?? DEFAULT_LEASE_TIMING;
    this.#leaseName = memberLeaseName(options.ring, options.identity);
    this.#log = (options.log ?? silentLogger).with({ shardLease: `${options.namespace}/${this.#leaseName}` });
    this.#observations = new LeaseObservations(options.identity);
    this.#settle = options.settle ?? settleTimingFor(this.#timing);
    this.#settling = new MembershipSettling(this.#settle);
    this.#view = notJoined(options.identity);
    if (options.identity.includes(",") || options.identity === "")
      throw new Error(`shard identity "${options.identity}" must be non-empty and contain no comma`);
  }

  /** What this replica knows of the ring now. */
  get view(): ShardView {
    return this.#view;
  }

  /** Whether this replica may start work on `key` now (never after the renew deadline has passed). */
  mayWork(key: string): boolean {
    if (this.#renewedAt === undefined) return false;
    if (this.#clock.now() - this.#renewedAt > this.#timing.renewDeadlineMs) return false;
    return mayWork(this.#view, key);
  }

  /** The live member that owns `key`, as this replica sees the ring. */
  ownerOf(key: string): string | undefined {
    return ownerIn(this.#view, key);
  }

  /** Runs `work` on `key` as work in flight: the ring hands no key away before its work has finished. */
  async track<T>(key: string, work: () => Promise<T>): Promise<T> {
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (this.#inFlight.get(key) ?? 1) - 1;
      if (left === 0) this.#inFlight.delete(key);
      else this.#inFlight.set(key, left);
      // The last work on a key leaving us may be what the next acknowledgement waits for.
      if (!sameMembers(this.#view.members, this.#view.acknowledged)) this.#kick();
    }
  }

  /** Registers a listener for changes of what this replica may work on. */
  onChange(listener: ShardListener): void {
    this.#listeners.push(listener);
  }

  /** Joins the ring: lists it, writes our Lease, and keeps both fresh every retry period. */
  start(): void {
    this.#kick();
  }

  /** Leaves the ring: deletes our Lease so peers take our keys at once. Call after the last reconcile. */
  async release(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#deadline?.cancel();
    await this.#ticking;
    this.#set({ ...this.#view, healthy: false });
    if (!this.#lease || this.#lost) return;
    const lease = this.#lease;
    await handBackLease(
      this.#log,
      {
        done: "left the shard ring",
        failed: "could not delete the membership lease; peers take over when it expires",
      },
      async () => {
        await deleteLease(this.#api, lease);
        return true;
      },
    );
  }

  /** Runs a round now, or right after the one in progress. */
  #kick(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#timer?.cancel();
    this.#ticking = this.#round().finally(() => {
      this.#ticking = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.#kick();
      } else {
        this.#timer = this.#clock.schedule(() => this.#kick(), this.#timing.retryPeriodMs);
      }
    });
  }

  async #round(): Promise<void> {
    const startedAt = this.#clock.now();
    try {
      const leases = await this.#list();
      const peers = this.#observations.update(leases, startedAt, this.#timing.leaseDurationMs);
      const live = peers.filter((peer) => peer.live);
      const wasJoined = this.#view.joined;
      const members = [this.identity, ...live.map((peer) => peer.identity)].sort();
      if (this.#settling.observe(members, startedAt) && !wasJoined && this.#createdAt !== undefined)
        this.#log.info("the shard ring changed while joining; waiting for it to settle", { members });
      this.#set({
        ...this.#view,
        joined: this.#showsOwnLease(leases, startedAt) && this.#hasSettled(startedAt),
        members,
        peers: new Map(live.map((peer) => [peer.identity, peer.acknowledged])),
      });
      if (this.#view.joined && !wasJoined)
        this.#log.info("joined the shard ring", {
          identity: this.identity,
          members,
          waitedMs: startedAt - (this.#createdAt ?? startedAt),
        });
      // What the live members take from us is no longer started (the gate reads `members`); once none
      // of it is in flight, we acknowledge them.
      const acknowledge = mayAcknowledge(this.#view, this.#inFlight.keys())
        ? this.#view.members
        : this.#view.acknowledged;
      // Reckoned from when the renewal was sent, not from the round's start: the renewal lands after it, so
      // the others' lease duration runs from later still; a list slowed by a busy API server costs nothing.
      const sentAt = this.#clock.now();
      await this.#renew(acknowledge);
      this.#renewedAt = sentAt;
      // Even if the next round hangs on a dead connection, the deadline is noticed on time.
      this.#deadline?.cancel();
      this.#deadline = this.#clock.schedule(
        () => this.#checkDeadline(),
        sentAt + this.#timing.renewDeadlineMs + 1 - this.#clock.now(),
      );
      this.#set({ ...this.#view, healthy: true, acknowledged: acknowledge });
      for (const peer of peers) {
        if (!peer.live && peer.unchangedForMs > FORGET_AFTER_DURATIONS * this.#timing.leaseDurationMs)
          await this.#forget(peer.lease);
      }
    } catch (error) {
      const status = apiStatusOf(error);
      this.#log.warn("could not renew the membership lease", {
        error: errorMessage(error),
        ...(status ? { status } : {}),
      });
    }
    this.#checkDeadline();
  }

  /**
   * Whether a list begun at `listedAt` makes us joined: it began a retry period or more after our Lease
   * was created and shows it (so it began after the create: lists are consistent reads).
   */
  #showsOwnLease(leases: readonly Lease[], listedAt: number): boolean {
    if (this.#createdAt === undefined || listedAt < this.#createdAt + this.#timing.retryPeriodMs)
      return false;
    return leases.some(
      (lease) => lease.metadata.name === this.#leaseName && lease.spec?.holderIdentity === this.identity,
    );
  }

  /** Whether the ring has settled by a list begun at `listedAt` since our Lease was created (latched: later changes move keys, they do not stop us). */
  #hasSettled(listedAt: number): boolean {
    if (this.#createdAt === undefined) return false;
    this.#settled ||= this.#settling.settled(listedAt, this.#createdAt);
    return this.#settled;
  }

  /** Past the renew deadline: stop at once (the gate already refuses), and say so once. */
  #checkDeadline(): void {
    if (this.#renewedAt === undefined || this.#lost) return;
    if (this.#clock.now() - this.#renewedAt <= this.#timing.renewDeadlineMs) return;
    this.#lost = true;
    this.#stopped = true;
    this.#timer?.cancel();
    this.#set({ ...this.#view, healthy: false });
    this.#log.error("lost the membership lease: could not renew it within the deadline; no more work");
    this.#options.onLost();
  }

  #set(view: ShardView): void {
    const before = this.#view;
    this.#view = view;
    if (sameView(before, view)) return;
    for (const listener of this.#listeners) listener(before, view);
  }

  async #list(): Promise<Lease[]> {
    const list = (await this.#api.listNamespacedCustomObject({
      ...LEASES,
      namespace: this.#options.namespace,
      labelSelector: `${SHARD_LEASE_LABELS.shardRing}=${this.#options.ring}`,
    })) as { items: Lease[] };
    return list.items;
  }

  /** Writes our Lease with a fresh renewTime and `acknowledged`; creates it on the first round (or if it went). */
  async #renew(acknowledged: readonly string[]): Promise<void> {
    const { namespace, ring } = this.#options;
    const now = microTime(this.#clock.now());
    const metadata = {
      name: this.#leaseName,
      namespace,
      labels: { [SHARD_LEASE_LABELS.shardRing]: ring },
      annotations: { [SHARD_LEASE_ANNOTATIONS.shardMembers]: acknowledgedAnnotation(acknowledged) },
    };
    const spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.#timing.leaseDurationMs / 1_000),
      renewTime: now,
    };
    this.#lease ??= await this.#read();
    if (this.#lease) {
      try {
        this.#lease = await replaceLease(this.#api, {
          ...this.#lease,
          metadata: { ...metadata, resourceVersion: this.#lease.metadata.resourceVersion },
          spec: { ...this.#lease.spec, ...spec },
        });
        return;
      } catch (error) {
        // Someone else wrote it (or deleted it): read it again next round rather than overwrite blindly.
        if (isConflict(error) || isNotFound(error)) this.#lease = undefined;
        throw error;
      }
    }
    this.#lease = await createLease(this.#api, metadata, spec);
    // Created anew (first round, or ours went): not joined until a list a retry period later shows it.
    this.#createdAt = this.#clock.now();
    this.#settled = false;
    this.#log.info("created the membership lease; waiting to see the ring", {
      identity: this.identity,
      members: acknowledged,
      quietMs: this.#settle.quietMs,
      maxWaitMs: this.#settle.maxWaitMs,
    });
  }

  #read(): Promise<Lease | undefined> {
    return readLease(this.#api, this.#options.namespace, this.#leaseName);
  }

  /** Deletes the Lease of a replica that died without releasing it (unless it came back meanwhile). */
  async #forget(lease: Lease): Promise<void> {
    try {
      await deleteLease(this.#api, lease);
      this.#log.info("deleted the membership lease of a replica long gone", {
        lease: lease.metadata.name,
        holder: lease.spec?.holderIdentity,
      });
    } catch (error) {
      this.#log.debug("could not delete a stale membership lease", { error: errorMessage(error) });
    }
  }
}
