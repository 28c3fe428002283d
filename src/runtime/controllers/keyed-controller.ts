/** The shape every controller of the engine shares: a keyed work queue, `run` starts it, `stop` drains it. */
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../logger.ts";
import type { EngineMetrics } from "../metrics.ts";
import type { ShardRing } from "../sharding/shard-ring.ts";
import { mayWork } from "../sharding/shard-view.ts";
import type { Controller } from "./controller.ts";
import { controllerQueue } from "./controller-queue.ts";
import type { Outcome } from "./outcome.ts";
import type { WorkQueue } from "./work-queue.ts";
import { asWriter } from "./write-loop-guard.ts";

/** What the engine hands every keyed controller: its clock, log, metrics and shard ring. */
export interface KeyedControllerSettings {
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly metrics?: EngineMetrics;
  /** Sharded mode: work only on the keys the ring gives this replica. */
  readonly shards?: ShardRing;
}

/** What every keyed controller is built with. */
export interface KeyedControllerProps extends KeyedControllerSettings {
  /** The controller's name in logs and metrics (`controller` label). */
  readonly name: string;
  /** Different keys reconciled at once (never two of one key). Default 1. */
  readonly concurrency?: number;
}

/**
 * A controller whose work is keys: subclasses say which cache events queue which keys (`watch`) and
 * what one reconcile of a key does (`reconcile`, level-based, returning an {@link Outcome}).
 */
export abstract class KeyedController implements Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  protected readonly clock: Clock;
  protected readonly log: Logger;
  protected readonly shards: ShardRing | undefined;

  constructor(props: KeyedControllerProps) {
    this.name = props.name;
    this.shards = props.shards;
    this.clock = props.clock ?? systemClock;
    this.log = (props.log ?? silentLogger).with({ controller: props.name });
    this.queue = controllerQueue({
      name: props.name,
      clock: this.clock,
      log: this.log,
      ...(props.concurrency === undefined ? {} : { concurrency: props.concurrency }),
      ...(props.metrics ? { metrics: props.metrics } : {}),
      // Sharded: another replica's keys are not even queued (nor counted as reconciles).
      ...(props.shards ? { admits: (key: string) => this.#mayWork(key) } : {}),
    });
  }

  abstract watch(): void;

  /** One reconcile of `key`; errors are thrown, and the queue handles them by the error policy (`error-policy.ts`). */
  abstract reconcile(key: string): Promise<Outcome>;

  /** Every key the controller has objects for now (its own cache's keys): handed back when they become ours. */
  abstract keys(): Iterable<string>;

  /** Keys with one shard key go to one replica (objects handled together); default: the key itself. */
  shardKeyOf(key: string): string {
    return key;
  }

  run(): void {
    const shards = this.shards;
    if (!shards) {
      this.queue.start((key) => this.#reconcileAsWriter(key));
      return;
    }
    // Keys that became ours (a peer left, or acknowledged us) are queued again; others' keys are refused
    // by the queue (when added and when taken), and the ring hands them back if they become ours.
    shards.onChange((before, after) => {
      for (const key of this.keys()) {
        const shardKey = this.shardKeyOf(key);
        if (!mayWork(before, shardKey) && mayWork(after, shardKey)) this.queue.add(key);
      }
    });
    this.queue.start((key) => shards.track(this.shardKeyOf(key), () => this.#reconcileAsWriter(key)));
  }

  #mayWork(key: string): boolean {
    return this.shards?.mayWork(this.shardKeyOf(key)) ?? true;
  }

  /** How many of the controller's keys the ring gives this replica (for metrics). */
  ownedKeys(): number {
    const shards = this.shards;
    if (!shards) return 0;
    let owned = 0;
    for (const key of this.keys()) if (shards.ownerOf(this.shardKeyOf(key)) === shards.identity) owned++;
    return owned;
  }

  /** A reconcile whose writes the write-loop guard counts as this controller's, for this key. */
  #reconcileAsWriter(key: string): Promise<Outcome> {
    return asWriter({ controller: this.name, key }, () => this.reconcile(key));
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
  }
}
