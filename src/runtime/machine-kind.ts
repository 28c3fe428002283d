/** A machine-backed kind as the runtime drives it: its pure definition plus how facts are gathered and commands run. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterBackend } from "../api/backend-contract.ts";
import type { Condition, ObjectMeta } from "../api/common.ts";
import type { SchedulerConfig } from "../api/scheduler-config.ts";
import type { AccessTiming } from "../machines/access-request/step.ts";
import type { ClusterTiming } from "../machines/cluster/step.ts";
import type { ClusterRequestTiming } from "../machines/cluster-request/step.ts";
import type { Explanation } from "../machines/shared/explanation.ts";
import type { MachineDefinition } from "../machines/shared/machine-definition.ts";
import type { MachineStep } from "../machines/shared/machine-step.ts";
import type { Clock } from "./clock.ts";
import type { WatchedObject } from "./informer.ts";
import type { CacheSpec, InformerSet } from "./informers.ts";
import type { Logger } from "./logger.ts";

/** The least a machine-backed object has: identity, the metadata a step may change, and a status. */
export interface MachineObject extends WatchedObject {
  readonly metadata: ObjectMeta;
  readonly status?: { readonly phase?: string; readonly conditions?: readonly Condition[] };
}

/** How soon to look again, per kind. */
export interface EngineTiming {
  readonly cluster: ClusterTiming;
  readonly accessRequest: AccessTiming;
  readonly clusterRequest: ClusterRequestTiming;
}

/** The scheduler configuration in force, and news of its changes. */
export interface SchedulerConfigView {
  /** The configuration in force; undefined when the engine was given none. */
  current(): SchedulerConfig | undefined;
  /** Told after a new valid configuration replaced the old one. */
  onChange(listener: (config: SchedulerConfig) => void): void;
  /** Loads it; throws with every problem when it is invalid (the engine then does not start). */
  start?(): Promise<void>;
  stop?(): void;
}

/** What every kind's I/O half may use; one per engine. */
export interface KindContext {
  readonly kubeConfig: KubeConfig;
  readonly informers: InformerSet;
  /** `--provider-name`: objects of other providers are never touched. */
  readonly providerName: string;
  readonly backend: ClusterBackend;
  readonly clock: Clock;
  readonly log: Logger;
  readonly timing: EngineTiming;
  readonly scheduler: SchedulerConfigView;
}

/** What the pure step is given besides the object and the observation. */
export interface StepContext {
  /** The runtime's clock, in ms since the epoch. */
  readonly now: number;
  /** Message of the last failed command on this object, while its commands keep failing. */
  readonly lastError: string | undefined;
}

/**
 * One reconcile of one object, opened by {@link MachineKind.open} with what stays fixed for the
 * reconcile (its profile, target, client, plan): `observe` reads the world (I/O, read-only), `step` is
 * the kind's pure step, `run` carries out its commands (I/O).
 */
export interface Reconciliation<T extends MachineObject, Observation, Command> {
  observe(object: T): Promise<Observation>;
  step(
    object: T,
    observation: Observation,
    context: StepContext,
  ): MachineStep<T["metadata"], unknown, Command>;
  run(commands: readonly Command[], object: T): Promise<void>;
}

/** A related cache whose changes wake objects of the kind: `keys` names them (namespace/name). */
export interface Wake<R extends WatchedObject> {
  readonly cache: CacheSpec<R>;
  keys(changed: R, context: KindContext): Iterable<string>;
}

/** Reads an object for `explain` (read-only); undefined when it does not exist, "unknown" when it cannot be read. */
export type ObjectReader = (
  resource: { readonly group: string; readonly version: string; readonly plural: string },
  namespace: string | undefined,
  name: string,
) => Promise<unknown | undefined | "unknown">;

export type { Explanation } from "../machines/shared/explanation.ts";

/**
 * A kind the generic {@link MachineController} drives: one of these and a folder in `src/machines`
 * is all a kind is. Registered once in `kinds/registry.ts`, which feeds the caches, the engine,
 * the statechart export, `explain` and the live view.
 */
export interface MachineKind<
  T extends MachineObject = MachineObject,
  Observation = unknown,
  Command = unknown,
> {
  readonly definition: MachineDefinition;
  /** The cache of the kind's own objects. */
  readonly cache: CacheSpec<T>;
  /** Related caches whose changes wake objects of this kind. */
  readonly wakes: readonly Wake<never>[];
  /**
   * Objects of one group (the key this returns) are reconciled one at a time, e.g. requests that may
   * share a Cluster, so one decides after the other has placed itself; undefined: no such group.
   */
  serialize?(object: T, context: KindContext): string | undefined;
  /**
   * Sharded mode: objects with one shard key are owned by one replica (the default is the object's own
   * namespace/name). Groups that `serialize` orders must share a shard key, and it must not change while
   * the object can act, so derive it from fields that never change.
   */
  shardKey?(object: T): string;
  /** Other things that wake objects (e.g. a reloaded configuration): called once, when the controller starts watching. */
  watch?(context: KindContext, wake: (key: string) => void): void;
  /**
   * Starts one reconcile: decides whether this engine acts on the object at all (undefined: no write,
   * no backend call) and gathers what stays fixed for the reconcile.
   */
  open(object: T, context: KindContext): Promise<Reconciliation<T, Observation, Command> | undefined>;
  /** A command in a few words, for logs and failure messages (never secrets). */
  describe(command: Command): string;
  /** Explains the object from what it stores and what `read` finds (read-only). */
  explain(object: T, read: ObjectReader): Promise<Explanation>;
}

/** Declares a wake with its cache's type, so `keys` is checked against it. */
export function wake<R extends WatchedObject>(
  cache: CacheSpec<R>,
  keys: (changed: R, context: KindContext) => Iterable<string>,
): Wake<never> {
  return { cache, keys } as unknown as Wake<never>;
}
