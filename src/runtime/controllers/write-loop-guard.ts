/**
 * A guard against write loops: an object this engine writes more often than any normal reconcile does is
 * noticed (a metric, a Warning Event on it, a log line) and its further writes are held back for a while,
 * longer each time it happens again, so a fight with another writer can never hammer the API server.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { KubeConfig } from "@kubernetes/client-node";
import { RESOURCES } from "../../api/constants.ts";
import { referenceKey } from "../../api/object-key.ts";
import type { Clock } from "../clock.ts";
import type { EventRecord, EventSubject } from "../event-recorder.ts";
import type { Logger } from "../logger.ts";
import type { EngineMetrics } from "../metrics.ts";
import { WriteLoopError } from "./errors.ts";

/** The object a write is about. */
export interface GuardedObject {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Absent for cluster-scoped kinds. */
  readonly namespace?: string;
  readonly name: string;
  /** For the Event, so `kubectl describe` finds it; absent when the writer does not know it. */
  readonly uid?: string;
}

/** Which reconcile is writing: a controller and the key it reconciles. */
export interface Writer {
  readonly controller: string;
  readonly key: string;
}

const writers = new AsyncLocalStorage<Writer>();

/**
 * Runs `reconcile` as `writer`: the writes it makes are counted for that controller and key. Why per
 * writer and not per object alone: many reconciles may legitimately write one object in a burst (every
 * ClusterRequest sharing a Cluster adds its finalizer to it: 30 writes of one Cluster within 10 s in the
 * scheduler's tests), while a loop is one reconcile writing one object over and over.
 */
export function asWriter<T>(writer: Writer, reconcile: () => Promise<T>): Promise<T> {
  return writers.run(writer, reconcile);
}

/** How many writes of one object count as a loop, and how long it is held back then. */
export interface WriteLoopLimits {
  /** More than this many writes of one object by one writer within `windowMs` is a loop. */
  readonly maxWrites: number;
  readonly windowMs: number;
  /** The first hold; each further loop within `maxHoldMs` of the last one doubles it. */
  readonly holdMs: number;
  readonly maxHoldMs: number;
}

/**
 * Why these numbers. What normal looks like, measured in the integration tests (cluster-controller,
 * machine-controller, profile-controller, access-requests, cluster-requests, operations) with a
 * zero-delay simulated backend, which is as fast as a lifecycle can go: the most writes of one object by
 * one writer within any 10 s was 8 (a Cluster created for a ClusterRequest, made Ready and deleted:
 * finalizer, labels and status at each step); a real backend only spreads them out. (Per object alone it
 * was 30: a shared Cluster getting the finalizers of many ClusterRequests, each its own writer.) A fight
 * is two writers answering each other as fast as the watch delivers: hundreds of writes a second (the
 * one reported went from resourceVersion 286 to 6,778 in 20 s). 30 writes in 10 s is almost four times
 * the busiest normal writer, and a fight reaches it within a fraction of a second. The hold then starts
 * at 10 s and doubles up to 5 minutes (the work queue's error backoff cap), so a fight that goes on costs
 * at most 30 writes per hold: from hundreds a second down to a few a minute, while the Warning Event
 * tells a person where to look.
 */
export const DEFAULT_WRITE_LOOP_LIMITS: WriteLoopLimits = {
  maxWrites: 30,
  windowMs: 10_000,
  holdMs: 10_000,
  maxHoldMs: 5 * 60_000,
};

/** What the guard needs. */
export interface WriteLoopGuardOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: EngineMetrics;
  /** Where the Warning Event goes (an {@link EventRecorder}'s `send`); none: no Event. */
  readonly sendEvent?: (subject: EventSubject, event: EventRecord, now: Date) => void;
  /** This engine's `--provider-name`, named in the Event so a person knows which writer it is. */
  readonly providerName: string;
  readonly limits?: WriteLoopLimits;
}

/** One object's recent writes and its holds. */
interface Track {
  /** When it was written, oldest first, within the window. */
  readonly writes: number[];
  /** Held back until then (ms since the epoch); 0: not held. */
  heldUntil: number;
  /** Loops in a row, each within `maxHoldMs` of the last (doubles the hold). */
  strikes: number;
  lastLoopAt: number;
}

/** Sweep idle tracks after this many writes, so objects written once do not stay in memory. */
const SWEEP_EVERY = 1_000;

/**
 * Flow: every write of the engine passes {@link WriteLoopGuard.enter} first (see `patchObject`), counted
 * per object and writer (the reconcile making it, see {@link asWriter}). A held write is refused with a
 * {@link WriteLoopError}; otherwise it is counted, and the one that makes more than `maxWrites` within
 * `windowMs` starts a hold (and is refused too). The controller requeues the key after the hold.
 *
 * Guarantees: at most `maxWrites` writes of one object by one writer per `windowMs`, and none while held;
 * a loop is told once per hold (one Warning Event, one count), never per refused write. Objects not
 * written recently are forgotten. Caveat: it counts this engine's writes only; another writer is bounded
 * by having no one to answer while we hold.
 */
export class WriteLoopGuard {
  readonly #options: WriteLoopGuardOptions;
  readonly #limits: WriteLoopLimits;
  readonly #tracks = new Map<string, Track>();
  #sinceSweep = 0;

  constructor(options: WriteLoopGuardOptions) {
    this.#options = options;
    this.#limits = options.limits ?? DEFAULT_WRITE_LOOP_LIMITS;
  }

  /** Counts a write of `object` about to be sent, or throws {@link WriteLoopError} if it must wait. */
  enter(object: GuardedObject): void {
    const now = this.#options.clock.now();
    const writer = writers.getStore();
    const key = `${trackKey(object)}|${writer ? `${writer.controller}/${writer.key}` : ""}`;
    const resource = object.plural;
    const track = this.#tracks.get(key) ?? { writes: [], heldUntil: 0, strikes: 0, lastLoopAt: 0 };
    this.#tracks.set(key, track);
    this.#sweep(now);
    if (track.heldUntil > now) {
      this.#options.metrics?.writeHeldBack(resource);
      throw new WriteLoopError(
        `${describe(object)} is held back after a write loop; next write in ${track.heldUntil - now} ms`,
        track.heldUntil - now,
      );
    }
    const { maxWrites, windowMs } = this.#limits;
    while (track.writes.length > 0 && (track.writes[0] as number) <= now - windowMs) track.writes.shift();
    if (track.writes.length < maxWrites) {
      track.writes.push(now);
      this.#options.metrics?.objectWritten(resource);
      return;
    }
    const holdMs = this.#hold(track, now);
    this.#options.metrics?.writeLoopDetected(resource);
    this.#options.metrics?.writeHeldBack(resource);
    const by = writer ? ` (its ${writer.controller} controller, reconciling ${writer.key})` : "";
    const message =
      `written ${track.writes.length} times within ${windowMs / 1_000} s by provider ${this.#options.providerName}${by}: ` +
      `another controller may be fighting over it (two providers serving one object?); further writes held back for ${holdMs / 1_000} s`;
    this.#options.log.warn("write loop: holding back writes of an object", {
      object: describe(object),
      ...(writer ? { writer: `${writer.controller}/${writer.key}` } : {}),
      writes: track.writes.length,
      windowMs,
      holdMs,
    });
    this.#options.sendEvent?.(
      subjectOf(object),
      { type: "Warning", reason: "WriteLoop", message },
      new Date(now),
    );
    // The window keeps its writes: a hold shorter than the window ends with the window still full, and the
    // next write is a loop again (with a doubled hold), so no window ever holds more than maxWrites.
    throw new WriteLoopError(`${describe(object)} ${message}`, holdMs);
  }

  /** Starts a hold: twice the last one if the last loop was recent, else the first. */
  #hold(track: Track, now: number): number {
    const { holdMs, maxHoldMs } = this.#limits;
    track.strikes = track.lastLoopAt > 0 && now - track.lastLoopAt <= maxHoldMs * 2 ? track.strikes + 1 : 1;
    track.lastLoopAt = now;
    const hold = Math.min(maxHoldMs, holdMs * 2 ** Math.min(track.strikes - 1, 30));
    track.heldUntil = now + hold;
    return hold;
  }

  /** Forgets objects neither written within the window nor held nor recently looping. */
  #sweep(now: number): void {
    if (++this.#sinceSweep < SWEEP_EVERY) return;
    this.#sinceSweep = 0;
    for (const [key, track] of this.#tracks) {
      const lastWrite = track.writes.at(-1) ?? 0;
      const quiet = lastWrite <= now - this.#limits.windowMs && track.heldUntil <= now;
      if (quiet && now - track.lastLoopAt > this.#limits.maxHoldMs * 2) this.#tracks.delete(key);
    }
  }
}

function trackKey(object: GuardedObject): string {
  return `${object.group}/${describe(object)}`;
}

function describe(object: GuardedObject): string {
  return `${object.plural}/${referenceKey(object)}`;
}

/** The Event's subject: the kind from the engine's resource table (the plural where it is not ours). */
function subjectOf(object: GuardedObject): EventSubject {
  const kind =
    Object.entries(RESOURCES).find(
      ([, resource]) => resource.group === object.group && resource.plural === object.plural,
    )?.[0] ?? object.plural;
  return {
    apiVersion: `${object.group}/${object.version}`,
    kind,
    metadata: {
      name: object.name,
      ...(object.namespace ? { namespace: object.namespace } : {}),
      ...(object.uid ? { uid: object.uid } : {}),
    },
  };
}

/** The guards each KubeConfig's writes pass, set by the engines that use it. */
const guards = new WeakMap<KubeConfig, WriteLoopGuard[]>();

/**
 * Makes every write through `kubeConfig` (by `patchObject`, and by the writers that call
 * {@link enterWrite}) pass `guard`, until the returned function removes it. Engines that share a
 * KubeConfig (tests do) each count the writes of all of them.
 */
export function guardWrites(kubeConfig: KubeConfig, guard: WriteLoopGuard): () => void {
  const list = guards.get(kubeConfig) ?? [];
  guards.set(kubeConfig, [...list, guard]);
  return () => {
    const left = (guards.get(kubeConfig) ?? []).filter((other) => other !== guard);
    if (left.length > 0) guards.set(kubeConfig, left);
    else guards.delete(kubeConfig);
  };
}

/** Passes a write of `object` through the guards of `kubeConfig` (none set: nothing to check). */
export function enterWrite(kubeConfig: KubeConfig, object: GuardedObject): void {
  for (const guard of guards.get(kubeConfig) ?? []) guard.enter(object);
}
