/** A machine-backed kind as the runtime drives it: its pure definition plus how facts are gathered and commands run. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterBackend } from "../api/backend-contract.ts";
import type { Condition, ObjectMeta } from "../api/common.ts";
import type { Explanation } from "../machines/shared/explanation.ts";
import type { MachineDefinition } from "../machines/shared/machine-definition.ts";
import type { MachineStep } from "../machines/shared/machine-step.ts";
import type { RequeueTiming } from "../machines/shared/machine-tags.ts";
import type { AdminAccessCache } from "./admin-access-cache.ts";
import type { Backends } from "./backends.ts";
import type { Clock } from "./clock.ts";
import type { KeyedController } from "./controllers/keyed-controller.ts";
import type { WatchedObject } from "./informer.ts";
import type { CacheSpec, InformerSet } from "./informers.ts";
import type { Logger } from "./logger.ts";
import type { MachineWriter } from "./machine-writer.ts";
import type { EngineMetrics } from "./metrics.ts";
import type { ShardRing } from "./sharding/shard-ring.ts";
import type { EngineTracing, TracedObject } from "./tracing/engine-tracing.ts";

/** The least a machine-backed object has: identity, the metadata a step may change, and a status. */
export interface MachineObject extends WatchedObject {
  readonly metadata: ObjectMeta;
  readonly status?: { readonly phase?: string; readonly conditions?: readonly Condition[] };
}

/**
 * Settings of one kind, given by kind name in the engine's `kindSettings`: `timing` overrides fields of
 * the kind's default timing; the rest the kind reads itself (e.g. an on/off switch in its `enabled`).
 * A kind's hooks see its own settings only, never the engine's options.
 */
export interface KindSettings {
  readonly timing?: { readonly [field: string]: number };
  readonly [setting: string]: unknown;
}

/** Two settings of one kind, `over` winning field by field (its `timing` too). */
export function mergeSettings(under: KindSettings | undefined, over: KindSettings | undefined): KindSettings {
  const timing = { ...under?.timing, ...over?.timing };
  return { ...under, ...over, ...(Object.keys(timing).length > 0 ? { timing } : {}) };
}

/** What a kind's other controllers are built with besides its context (see {@link MachineKind.controllers}). */
export interface ControllerParts {
  readonly metrics: EngineMetrics;
  /** Sharded mode: the ring that gives this replica its keys. */
  readonly shards?: ShardRing;
}

/** What a kind's I/O half may use: the engine's shared parts, and the kind's own timing and state. */
export interface KindContext<Timing = RequeueTiming, State = unknown> {
  readonly kubeConfig: KubeConfig;
  readonly informers: InformerSet;
  /** `--provider-name`: objects of other providers are never touched. */
  readonly providerName: string;
  /** `--environment`: with the provider name, the shape of our profiles' names (`<environment>.<provider-name>.…`). */
  readonly environment: string;
  /** Routes every call about a cluster to its backend (the one backend, when the engine runs one). */
  readonly backend: ClusterBackend;
  /** The backends themselves: for what one cluster's backend is (its name, capabilities, ClusterConfig kind). */
  readonly backends: Backends;
  /**
   * The backend's admin access per cluster, shared by every kind of the engine: ask through it, not the
   * backend, so the backend is asked once per rotation window (see admin-access-cache.ts).
   */
  readonly adminAccess: AdminAccessCache;
  readonly clock: Clock;
  readonly log: Logger;
  /** The engine's spans, when `OTEL_*` asks for traces (see tracing/); undefined: no tracing at all. */
  readonly tracing?: EngineTracing;
  /** The kind's timing: its defaults, overridden by the engine's options. */
  readonly timing: Timing;
  /** The kind's per-engine state, made once by its `state` hook (undefined without one). */
  readonly state: State;
}

/** What the pure step is given besides the object and the observation. */
export interface StepContext {
  /** The runtime's clock, RFC 3339, formatted once per look (for condition times). */
  readonly now: string;
  /** The same instant in ms since the epoch, for kinds that reckon with it (e.g. a token's renewal). */
  readonly nowMs: number;
  /** Message of the last failed command on this object, while its commands keep failing. */
  readonly lastError: string | undefined;
}

/**
 * How commands write API objects (others than the reconciled one, e.g. a pool's status, a Secret they are done
 * with): through the controller's {@link MachineWriter}, like its own writes, so they are counted, traced and
 * kept in memory by a test's writer.
 */
export type CommandWriter = Pick<MachineWriter, "patch" | "remove">;

/**
 * One reconcile of one object, opened by {@link MachineKind.open} with what stays fixed for the
 * reconcile (its profile, target, client, plan): `observe` reads the world (I/O, read-only), `step` is
 * the kind's pure step, `run` carries out its commands (I/O: the backend, and API writes through `writer`).
 */
export interface Reconciliation<T extends MachineObject, Observation, Command> {
  observe(object: T): Promise<Observation>;
  step(
    object: T,
    observation: Observation,
    context: StepContext,
  ): MachineStep<T["metadata"], unknown, Command>;
  run(commands: readonly Command[], object: T, writer: CommandWriter): Promise<void>;
  /**
   * The status to show while `observe` fails with `failure` (pure; the machine does not move, as nothing is
   * known); undefined, or absent: the status stays as it is and only an Event tells the failure.
   */
  unobserved?(object: T, failure: string, context: StepContext): unknown;
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
 * the statechart export, `explain` and the live view. The kind owns its settings: its timing, whether
 * it runs, its per-engine state and every cache it reads; the engine names no kind.
 */
export interface MachineKind<
  T extends MachineObject = MachineObject,
  Observation = unknown,
  Command = unknown,
  Timing extends RequeueTiming = RequeueTiming,
  State = unknown,
  Settings extends KindSettings = KindSettings,
> {
  readonly definition: MachineDefinition;
  /** The cache of the kind's own objects. */
  readonly cache: CacheSpec<T>;
  /** Related caches whose changes wake objects of this kind. */
  readonly wakes: readonly Wake<never>[];
  /**
   * Every other cache the kind reads (in `open`, `observe`, `run`), besides its own and its wakes':
   * declared up front, so the engine makes them all before it starts its caches.
   */
  readonly reads?: readonly CacheSpec<WatchedObject>[];
  /** How soon to look again by default; its settings' `timing` overrides fields (see {@link kindTiming}). */
  readonly timing: Timing;
  /** Whether an engine drives the kind with these settings (default: always). */
  enabled?(settings: Settings): boolean;
  /** Makes the kind's per-engine state, once per engine that drives it (e.g. memory of its own writes). */
  state?(context: KindContext<Timing, undefined>, settings: Settings): State;
  /**
   * Controllers the kind runs beside its machine controller (e.g. one that prepares its objects), made
   * once per engine that drives the kind, before the caches start.
   */
  controllers?(
    context: KindContext<Timing, State>,
    settings: Settings,
    parts: ControllerParts,
  ): readonly KeyedController[];
  /** Runs before the engine starts its caches (e.g. loads a configuration); a rejection stops the start. */
  start?(context: KindContext<Timing, State>): Promise<void>;
  /** Runs when the engine stops. */
  stop?(context: KindContext<Timing, State>): void;
  /**
   * Lines /readyz shows about the kind besides its verdict (e.g. what it leaves to others); `context` is
   * undefined when the engine does not drive the kind.
   */
  readiness?(settings: Settings, context: KindContext<Timing, State> | undefined): readonly string[];
  /**
   * Objects of one group (the key this returns) are reconciled one at a time, e.g. requests that may
   * share a Cluster, so one decides after the other has placed itself; undefined: no such group.
   */
  serialize?(object: T, context: KindContext<Timing, State>): string | undefined;
  /**
   * Sharded mode: objects with one shard key are owned by one replica (the default is the object's own
   * namespace/name). Groups that `serialize` orders must share a shard key, and it must not change while
   * the object can act, so derive it from fields that never change.
   */
  shardKey?(object: T): string;
  /** Other things that wake objects (e.g. a reloaded configuration): called once, when the controller starts watching. */
  watch?(context: KindContext<Timing, State>, wake: (key: string) => void): void;
  /**
   * Starts one reconcile: decides, once, whether this engine acts on the object at all (undefined: no
   * write, no backend call) and gathers what stays fixed for the reconcile (e.g. the backend's target).
   * It reads, never writes: every write is a step's (through the controller) or a command's.
   */
  open(
    object: T,
    context: KindContext<Timing, State>,
  ): Promise<Reconciliation<T, Observation, Command> | undefined>;
  /**
   * Runs instead of the step while an object that `open` took on is paused for a move (see PAUSED_ANNOTATION):
   * what the kind does then besides nothing, e.g. hand a Cluster's backend state over. Never writes the object.
   */
  paused?(object: T, context: KindContext<Timing, State>): Promise<void>;
  /** A command in a few words, for logs and failure messages (never secrets). */
  describe(command: Command): string;
  /**
   * The object whose span this object's spans continue when no `traceparent` annotation of its own names
   * one (an AccessRequest: its Cluster's); undefined: its own trace.
   */
  traceLink?(object: T, context: KindContext<Timing, State>): TracedObject | undefined;
  /** Explains the object from what it stores and what `read` finds (read-only). */
  explain(object: T, read: ObjectReader): Promise<Explanation>;
}

/** A kind's timing for an engine: its defaults, then its settings' `timing`, field by field. */
export function kindTiming(kind: MachineKind, settings: KindSettings): RequeueTiming {
  return { ...kind.timing, ...settings.timing };
}

/** Every cache a kind reads: its own, its wakes', and those it declares. */
export function cachesOf(kind: MachineKind): CacheSpec<WatchedObject>[] {
  return [
    kind.cache,
    ...kind.wakes.map((related) => related.cache),
    ...(kind.reads ?? []),
  ] as CacheSpec<WatchedObject>[];
}

/** Declares a wake with its cache's type, so `keys` is checked against it. */
export function wake<R extends WatchedObject, Timing = RequeueTiming, State = unknown>(
  cache: CacheSpec<R>,
  keys: (changed: R, context: KindContext<Timing, State>) => Iterable<string>,
): Wake<never> {
  return { cache, keys } as unknown as Wake<never>;
}
