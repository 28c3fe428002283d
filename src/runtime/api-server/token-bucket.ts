/**
 * A token bucket, client-go's client-side rate limiter: `qps` tokens a second, at most `burst` saved up.
 * Waiters are served first come, first served, so a burst of requests cannot starve an earlier one.
 */
import type { Clock, TimerHandle } from "../clock.ts";

/** Rate and burst of a {@link TokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second; > 0. */
  readonly qps: number;
  /** Tokens the bucket holds at most (and starts with); ≥ 1. */
  readonly burst: number;
  readonly clock: Clock;
}

export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #filledAt: number;
  readonly #waiters: Array<() => void> = [];
  #timer: TimerHandle | undefined;

  constructor(options: TokenBucketOptions) {
    if (!(options.qps > 0)) throw new RangeError(`qps must be above 0, not ${options.qps}`);
    if (!(options.burst >= 1)) throw new RangeError(`burst must be at least 1, not ${options.burst}`);
    this.#qps = options.qps;
    this.#burst = options.burst;
    this.#clock = options.clock;
    this.#tokens = options.burst;
    this.#filledAt = options.clock.now();
  }

  /** Takes a token now if one is there and nobody waits before us; false otherwise. */
  tryTake(): boolean {
    this.#refill();
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Resolves once a token is ours; at once when one is there. */
  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#wake();
    });
  }

  /** Requests waiting for a token. */
  get waiting(): number {
    return this.#waiters.length;
  }

  #refill(): void {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#filledAt) / 1_000) * this.#qps);
    this.#filledAt = now;
  }

  /** Hands out the tokens there are, in order, and sleeps until the next one is due. */
  #wake(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#refill();
    while (this.#waiters.length > 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      (this.#waiters.shift() as () => void)();
    }
    if (this.#waiters.length === 0) return;
    const dueInMs = Math.ceil(((1 - this.#tokens) / this.#qps) * 1_000);
    this.#timer = this.#clock.schedule(() => this.#wake(), Math.max(1, dueInMs));
  }
}
