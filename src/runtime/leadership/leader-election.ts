/** Leader election on a coordination.k8s.io Lease, the way client-go does it: one replica reconciles, the others wait. */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { type Clock, systemClock, type TimerHandle } from "../clock.ts";
import { errorMessage, type Logger, silentLogger } from "../logger.ts";
import {
  createLease,
  DEFAULT_LEASE_TIMING,
  handBackLease,
  type Lease,
  type LeaseTiming,
  microTime,
  readLease,
  recordOf,
  replaceLease,
} from "./lease.ts";

/** Timings of leader election (the shared Lease timings). */
export type LeaderElectionTiming = LeaseTiming;

/** controller-runtime's defaults. */
export const DEFAULT_LEADER_ELECTION: LeaderElectionTiming = DEFAULT_LEASE_TIMING;

/** Which Lease, who we are, and what to do on winning or losing. */
export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica, e.g. the pod name. */
  readonly identity: string;
  readonly timing?: LeaderElectionTiming;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Called once when this replica becomes the leader. */
  readonly onStartedLeading: () => void;
  /** Called once if leadership is lost (renewals failed past the deadline); the process should stop reconciling. */
  readonly onStoppedLeading: () => void;
}

/**
 * Flow: try to acquire every retry period; the Lease is free when it has no holder or its holder has
 * not renewed it for a whole lease duration *as observed by us* (our clock measures how long the
 * record stayed unchanged, so clock skew between replicas does not matter). Writes use the Lease's
 * resourceVersion, so two candidates cannot both win. The leader renews every retry period; if no
 * renewal succeeds within the renew deadline it steps down. `release()` hands the Lease back at once.
 */
export class LeaderElector {
  readonly #options: LeaderElectionOptions;
  readonly #api: CustomObjectsApi;
  readonly #clock: Clock;
  readonly #timing: LeaderElectionTiming;
  readonly #log: Logger;
  /** The last Lease record seen, and when (our clock) it last changed. */
  #observed: { readonly key: string; readonly at: number } | undefined;
  #leading = false;
  #lastRenewal = 0;
  #stopped = false;
  #timer: TimerHandle | undefined;
  /** The attempt in flight, if any (release waits for it). */
  #attempt: Promise<void> | undefined;
  /** When (our clock) this candidate started: a released Lease goes to one that has campaigned longer. */
  #startedAt = 0;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#api = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#clock = options.clock ?? systemClock;
    this.#timing = options.timing ?? DEFAULT_LEADER_ELECTION;
    this.#log = (options.log ?? silentLogger).with({ lease: `${options.namespace}/${options.name}` });
  }

  /** Whether this replica holds the Lease right now. */
  isLeader(): boolean {
    return this.#leading;
  }

  /** Starts campaigning (and, once leading, renewing) in the background. */
  start(): void {
    this.#startedAt = this.#clock.now();
    this.#tick();
  }

  /** Stops campaigning; if leading, gives the Lease back so another replica takes over at once. */
  async release(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    // A renewal in flight would otherwise land after the release (taking the Lease back) or report
    // "became leader" to a stopping engine: let it settle first; #after ignores it once stopped.
    await this.#attempt;
    if (!this.#leading) return;
    this.#leading = false;
    await handBackLease(
      this.#log,
      {
        done: "leadership released",
        failed: "could not release the lease; others take over when it expires",
      },
      async () => {
        const lease = await this.#read();
        if (lease?.spec?.holderIdentity !== this.#options.identity) return false;
        await replaceLease(this.#api, {
          ...lease,
          spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: this.#now() },
        });
        return true;
      },
    );
  }

  #tick(): void {
    if (this.#stopped) return;
    this.#attempt = this.#tryAcquireOrRenew()
      .then(
        (held) => this.#after(held),
        (error: unknown) => {
          this.#log.debug("lease attempt failed", { error: errorMessage(error) });
          this.#after(false);
        },
      )
      .finally(() => {
        if (!this.#stopped)
          this.#timer = this.#clock.schedule(() => this.#tick(), this.#timing.retryPeriodMs);
      });
  }

  #after(held: boolean): void {
    // Stopping: a Lease taken by the last attempt is only noted, for release() to give back.
    if (this.#stopped) {
      if (held) this.#leading = true;
      return;
    }
    const now = this.#clock.now();
    if (held) {
      this.#lastRenewal = now;
      if (!this.#leading) {
        this.#leading = true;
        this.#log.info("became leader", { identity: this.#options.identity });
        this.#options.onStartedLeading();
      }
    } else if (this.#leading && now - this.#lastRenewal > this.#timing.renewDeadlineMs) {
      this.#leading = false;
      this.#stopped = true;
      this.#log.error("lost leadership: could not renew the lease within the deadline");
      this.#options.onStoppedLeading();
    }
  }

  /** One attempt: true if we hold the Lease afterwards. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.#options;
    const now = this.#now();
    const durationSeconds = Math.ceil(this.#timing.leaseDurationMs / 1_000);
    const lease = await this.#read();
    if (!lease) {
      await createLease(
        this.#api,
        { name, namespace },
        { holderIdentity: identity, leaseDurationSeconds: durationSeconds, renewTime: now },
      );
      return true;
    }
    const spec = lease.spec ?? {};
    const key = recordOf(lease);
    if (this.#observed?.key !== key) this.#observed = { key, at: this.#clock.now() };
    const ours = spec.holderIdentity === identity;
    const held = Boolean(spec.holderIdentity);
    const expired =
      this.#clock.now() - (this.#observed?.at ?? 0) > (spec.leaseDurationSeconds ?? durationSeconds) * 1_000;
    if (held && !ours && !expired) {
      this.#log.debug("lease held", { holder: spec.holderIdentity });
      return false;
    }
    // A Lease its leader released (a Pod deleted, a rollout) goes to a standby that has campaigned for a
    // while: a candidate started less than two retry periods ago (e.g. the Pod started to replace the
    // leader, even if it began before the leader finished its last reconciles and let go) leaves it for a
    // round or two; a standby polls every retry period, so it takes it first. Alone, the new one takes it then.
    if (!held && this.#clock.now() - this.#startedAt < 2 * this.#timing.retryPeriodMs) {
      this.#log.info("the lease was released; leaving it for one round to a replica that watched its holder");
      return false;
    }
    await replaceLease(this.#api, {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: now,
        ...(ours ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
      },
    });
    return true;
  }

  #read(): Promise<Lease | undefined> {
    return readLease(this.#api, this.#options.namespace, this.#options.name);
  }

  #now(): string {
    return microTime(this.#clock.now());
  }
}
