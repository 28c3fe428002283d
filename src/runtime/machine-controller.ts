/** The one machine controller: cache events → queue → observe → pure step → one write → commands → requeue, for any kind. */
import { LABELS, REASONS } from "../api/constants.ts";
import { isPaused, PAUSED_ANNOTATION } from "../api/move.ts";
import { objectKey } from "../api/object-key.ts";
import type { PatchOperation } from "../machines/shared/json-patch.ts";
import type { MachineStep } from "../machines/shared/machine-step.ts";
import { rfc3339 } from "../machines/shared/rfc3339.ts";
import { KeyedLock } from "../util/keyed-lock.ts";
import { changesTo, patchObject, removeObject } from "./api-server/patch-object.ts";
import { GoneError } from "./controllers/errors.ts";
import { KeyedController } from "./controllers/keyed-controller.ts";
import { Outcome } from "./controllers/outcome.ts";
import { RecentWrites } from "./controllers/recent-writes.ts";
import { type EventRecord, EventRecorder, eventsWorthRecording } from "./event-recorder.ts";
import type { Informer } from "./informer.ts";
import { errorMessage } from "./logger.ts";
import type { CommandWriter, KindContext, MachineKind, MachineObject } from "./machine-kind.ts";
import { type MachineObserver, tellObservers } from "./machine-observer.ts";
import type { MachineWriter } from "./machine-writer.ts";
import type { EngineMetrics } from "./metrics.ts";
import type { ShardRing } from "./sharding/shard-ring.ts";
import type { ReconcileTrace } from "./tracing/engine-tracing.ts";

/** How to run one kind. */
export interface MachineControllerOptions<T extends MachineObject> {
  readonly kind: MachineKind<T>;
  readonly context: KindContext;
  /** Objects reconciled at once (never two of one key). Default 4. */
  readonly concurrency?: number;
  /** Record Kubernetes Events (default true). */
  readonly recordEvents?: boolean;
  readonly metrics?: EngineMetrics;
  /** Told about every committed machine step (inspector, live view). */
  readonly observers?: readonly MachineObserver[];
  /** Told after every reconcile that stepped the machine, for progress displays and tests. */
  readonly onReconciled?: (kind: string, key: string, step: AnyStep) => void;
  /** Sharded mode: work only on the keys the ring gives this replica. */
  readonly shards?: ShardRing;
  /** Where patches and Events go (default: the API server of the context's kubeConfig). */
  readonly writer?: MachineWriter;
}

/** A step of any kind. */
export type AnyStep = MachineStep<unknown, unknown, unknown>;

/** A reconcile with tracing off: the work, nothing else. */
const UNTRACED: ReconcileTrace = {
  decided: () => {},
  span: (_name, _attributes, work) => work(),
  event: (_name, _attributes, work) => work(),
  stepped: () => {},
  end: () => {},
};

/** At most this many observe → step → command rounds in one reconcile (a zero-delay backend needs two). */
const MAX_ROUNDS = 3;

/**
 * A reconcile whose last round still wanted commands looks again after this long, doubling each time
 * it happens again in a row, up to {@link UNFINISHED_MAX_MS} (and never later than the step asks):
 * never a hot loop on an object whose commands never settle it.
 */
const UNFINISHED_FIRST_MS = 50;
const UNFINISHED_MAX_MS = 10_000;

/**
 * Flow: an object's key comes off the queue → its kind opens a reconciliation (or says "not ours":
 * nothing more) → up to three rounds of observe → pure step → (metadata write → commands) → the
 * desired metadata and status written once, each as the diff against the stored object, guarded by
 * its resourceVersion → Events of what happened → requeue as the step asks.
 *
 * Guarantees: never two reconciles of one key at once; no write when the step desires the object as it
 * is; the metadata (finalizer) is stored before any command runs; a failed command ends the reconcile
 * after one more look, whose step reports the failure (a condition, and a Warning Event when it differs
 * from the last one), and is retried with backoff; a reconcile on a stale copy writes nothing (its patches fail their test).
 */
export class MachineController<T extends MachineObject> extends KeyedController {
  readonly events: EventRecorder;
  readonly cache: Informer<T>;
  /** Writes to objects of the kind (for benchmarks and tests). */
  writes = 0;
  readonly #kind: MachineKind<T>;
  readonly #context: KindContext;
  readonly #options: MachineControllerOptions<T>;
  readonly #writer: MachineWriter;
  /** Reconciles of objects in one group (the kind's `serialize`) run one at a time. */
  readonly #groups = new KeyedLock();
  /** Objects of the kind as this controller last wrote them. */
  readonly #ownWrites: RecentWrites<T>;
  /** Message of the last failed command per object uid; diagnostic only (lost on restart by design). */
  readonly #lastErrors = new Map<string, string>();
  /** The last failed look (observe) told per object uid, so a person is told once per distinct failure. */
  readonly #toldLookFailures = new Map<string, string>();
  /** Uids of the paused objects whose pause was told in an Event. */
  readonly #toldPaused = new Set<string>();
  /** Reconciles in a row that ended with commands still wanted, per key. */
  readonly #unfinishedInARow = new Map<string, number>();

  constructor(options: MachineControllerOptions<T>) {
    super({
      name: options.kind.definition.kind.toLowerCase(),
      concurrency: options.concurrency ?? 4,
      clock: options.context.clock,
      log: options.context.log,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.shards ? { shards: options.shards } : {}),
    });
    this.#options = options;
    this.#kind = options.kind;
    this.#context = options.context;
    this.cache = options.context.informers.of(options.kind.cache);
    this.#ownWrites = new RecentWrites<T>(options.context.clock);
    this.events = new EventRecorder(options.context.kubeConfig, this.log);
    const { kubeConfig } = options.context;
    this.#writer = options.writer ?? {
      patch: (target, operations, subresource) => patchObject(kubeConfig, target, operations, subresource),
      remove: (target) => removeObject(kubeConfig, target),
      record: (subject, event, now) => this.events.send(subject, event, now),
    };
    options.metrics?.countObjects(() => this.#phaseCounts());
  }

  watch(): void {
    const kind = this.#kind.definition.kind;
    this.cache.on((event) => {
      // The echo of our own last write tells nothing new: the reconcile that made it asked for what follows.
      if (event.type === "upsert" && this.#ownWrites.takeEcho(event.key, event.object)) return;
      this.queue.add(event.key);
      if (event.type === "delete") {
        for (const observer of this.#options.observers ?? [])
          observer.removed(kind, event.object.metadata.uid ?? "");
        this.#context.tracing?.forget(event.object.metadata.uid ?? "");
      }
    });
    this.#kind.watch?.(this.#context, (key) => this.queue.add(key));
    for (const related of this.#kind.wakes) {
      this.#context.informers.of(related.cache).on((event) => {
        for (const key of related.keys(event.object as never, this.#context)) this.queue.add(key);
      });
    }
  }

  keys(): Iterable<string> {
    return this.cache.keys();
  }

  override shardKeyOf(key: string): string {
    const object = this.cache.get(key);
    return (object && this.#kind.shardKey?.(object)) ?? key;
  }

  /** Stops reconciling, then waits for the Events already recorded to be written. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.events.flush();
  }

  override run(): void {
    super.run();
    this.log.info("started", { provider: this.#context.providerName, backend: this.#context.backend.name });
  }

  /** One reconcile of the object with this key. */
  async reconcile(key: string): Promise<Outcome> {
    // The object as this controller last wrote it while the cache has not caught up: a reconcile woken
    // meanwhile starts from what is stored, not from a stale copy whose writes would only fail their test.
    const cached = this.cache.get(key);
    if (!cached) {
      this.#unfinishedInARow.delete(key);
      return Outcome.awaitChange(); // gone: whatever was written before no longer matters
    }
    const object = this.#ownWrites.get(key, cached) ?? cached;
    const group = this.#kind.serialize?.(object, this.#context);
    return group === undefined
      ? this.#reconcile(key, object)
      : this.#groups.run(group, () =>
          this.#reconcile(key, this.#ownWrites.get(key, this.cache.get(key) ?? object) ?? object),
        );
  }

  /**
   * The reconcile's look at the world. A look that fails (e.g. a Cluster whose backend cannot be told) is retried
   * like any failure, and told on the object as a Warning Event, once per distinct message.
   */
  async #observe(
    work: NonNullable<Awaited<ReturnType<MachineKind<T>["open"]>>>,
    object: T,
    uid: string,
    failures: EventRecord[],
    traced: ReconcileTrace,
  ): Promise<unknown> {
    try {
      const observation = await work.observe(object);
      this.#toldLookFailures.delete(uid);
      return observation;
    } catch (error) {
      if (error instanceof GoneError) throw error;
      const message = `looking at it failed: ${errorMessage(error)}`;
      if (this.#toldLookFailures.get(uid) !== message) {
        failures.push({ type: "Warning", reason: REASONS.ObserveFailed, message });
        this.#toldLookFailures.set(uid, message);
      }
      // Where the kind can say it on the object (a Cluster's ClusterReady), the failure is shown there too.
      const nowMs = this.clock.now();
      const status = work.unobserved?.(object, errorMessage(error), {
        now: rfc3339(nowMs),
        nowMs,
        lastError: this.#lastErrors.get(uid),
      });
      if (status !== undefined) {
        // The look's failure is what the reconcile reports; a refused write of it is retried with the look.
        await this.#patch(object, changesTo(object, "status", status), "status", traced).catch((refused) =>
          this.log.debug("showing a failed look refused", { uid, error: errorMessage(refused) }),
        );
      }
      throw error;
    }
  }

  async #reconcile(key: string, object: T): Promise<Outcome> {
    const work = await this.#kind.open(object, this.#context);
    if (!work) return Outcome.awaitChange();
    if (isPaused(object)) return this.#whilePaused(object);
    this.#toldPaused.delete(object.metadata.uid ?? "");
    const traced = this.#context.tracing?.startReconcile(
      this.#kind.definition.kind,
      object,
      this.#initialState,
      this.#kind.traceLink?.(object, this.#context),
    );
    try {
      const outcome = await this.#reconcileOpened(key, object, work, traced ?? UNTRACED);
      traced?.end();
      return outcome;
    } catch (error) {
      traced?.end(error);
      throw error;
    }
  }

  /** The machine's first state (where its object span ends, see tracing/engine-tracing.ts). */
  get #initialState(): string {
    return String(this.#kind.definition.machine.config.initial ?? "");
  }

  async #reconcileOpened(
    key: string,
    object: T,
    work: NonNullable<Awaited<ReturnType<MachineKind<T>["open"]>>>,
    traced: ReconcileTrace,
  ): Promise<Outcome> {
    const uid = object.metadata.uid ?? "";
    // `stored` is what the API server holds; `local` is it with the status computed so far.
    let stored = object;
    let local = object;
    let last: AnyStep | undefined;
    const steps: AnyStep[] = [];
    /** The steps whose Events are told: each whose commands ran (or that had none). */
    const told: AnyStep[] = [];
    /** Failures of commands: told whatever became of the writes. */
    const failures: EventRecord[] = [];
    let failure: unknown;
    let committed = false;
    /** The last round ran commands with no round left to look at what they did: the next reconcile follows at once. */
    let unfinished = false;
    try {
      // A failed command's round is followed by one more look, which only reports it (even past MAX_ROUNDS).
      for (let round = 1; round <= MAX_ROUNDS + 1; round++) {
        const observation = await this.#observe(work, local, uid, failures, traced);
        const nowMs = this.clock.now();
        last = work.step(local, observation, {
          now: rfc3339(nowMs),
          nowMs,
          lastError: this.#lastErrors.get(uid),
        });
        traced.decided(last);
        steps.push(last);
        // After a failure, the last look only reports it: its commands and Events did not happen.
        if (failure !== undefined) break;
        told.push(last);
        if (last.commands.length === 0) break;
        stored = await this.#writeMetadata(stored, last, traced);
        local = { ...stored, status: last.desired.status };
        try {
          // One at a time, each in its own span: `run` carries out a list in order, so this is the same.
          for (const command of last.commands) {
            await traced.span(`command ${this.#kind.describe(command)}`, {}, () =>
              work.run([command], stored, this.#commandWriter(traced)),
            );
          }
          this.#lastErrors.delete(uid);
        } catch (error) {
          failure = error;
          const message = `${last.commands.map((command) => this.#kind.describe(command)).join(", ")} failed: ${errorMessage(error)}`;
          // A person is told once per distinct failure, not on every retry of the same one.
          if (this.#lastErrors.get(uid) !== message) {
            failures.push({ type: "Warning", reason: "BackendError", message });
          }
          this.#lastErrors.set(uid, message);
        }
        // Every step told is one whose commands ran: the last round's ran too, and the next reconcile looks.
        if (round === MAX_ROUNDS && failure === undefined) {
          unfinished = true;
          break;
        }
      }
      if (last) {
        // Metadata first, so labels are in place when the status says Ready; if it removes our
        // finalizer the object may be gone before the status write, which then ends in GoneError.
        stored = await this.#writeMetadata(stored, last, traced);
        stored = await this.#patch(
          stored,
          changesTo(stored, "status", last.desired.status),
          "status",
          traced,
        );
      }
      committed = true;
    } catch (error) {
      if (!(error instanceof GoneError)) throw error;
      committed = true; // e.g. our finalizer went and the object with it: the step's outcome stands
      return Outcome.awaitChange();
    } finally {
      // Transitions are told only if their writes went through (a stale copy's were refused); failures always.
      this.#recordEvents(object, committed ? [...eventsWorthRecording(told), ...failures] : failures);
      if (committed) {
        this.#tellObservers(object, steps);
        traced.stepped(steps, this.clock.now());
      }
    }
    if (failure !== undefined) throw failure;
    if (!last) return Outcome.awaitChange();
    this.#options.onReconciled?.(this.#kind.definition.kind, key, last);
    if (unfinished) {
      const requeueAfterMs = this.#unfinishedDelay(key, last.requeueAfterMs);
      this.log.info("reconciled", { key, state: last.state, requeueAfterMs, unfinished: true });
      return Outcome.requeueAfter(requeueAfterMs);
    }
    this.#unfinishedInARow.delete(key);
    this.log.info("reconciled", { key, state: last.state, requeueAfterMs: last.requeueAfterMs });
    return last.requeueAfterMs === undefined
      ? Outcome.awaitChange()
      : Outcome.requeueAfter(last.requeueAfterMs);
  }

  /**
   * A paused object (see PAUSED_ANNOTATION) of this engine's: no step, no write to it, no command; only the kind's
   * `paused` hook (e.g. the hand-over of a Cluster's backend state) and, once per pause, an Event that says so.
   */
  async #whilePaused(object: T): Promise<Outcome> {
    await this.#kind.paused?.(object, this.#context);
    const uid = object.metadata.uid ?? "";
    if (!this.#toldPaused.has(uid)) {
      this.#toldPaused.add(uid);
      this.#recordEvents(object, [
        {
          type: "Normal",
          reason: REASONS.Paused,
          message: `paused (${PAUSED_ANNOTATION}: "true"): the engine leaves it as it is until the annotation goes`,
        },
      ]);
    }
    this.log.info("paused", { key: objectKey(object) });
    return Outcome.awaitChange();
  }

  /** How long to wait before looking again at an object whose commands did not settle it this time. */
  #unfinishedDelay(key: string, wanted: number | undefined): number {
    const inARow = (this.#unfinishedInARow.get(key) ?? 0) + 1;
    this.#unfinishedInARow.set(key, inARow);
    const escalated = Math.min(UNFINISHED_FIRST_MS * 2 ** (inARow - 1), UNFINISHED_MAX_MS);
    return wanted === undefined ? escalated : Math.min(escalated, wanted);
  }

  /** Writes the step's metadata and the spec fields it owns (if any), as one patch. */
  #writeMetadata(stored: T, step: AnyStep, traced: ReconcileTrace): Promise<T> {
    const operations = [
      ...changesTo(stored, "metadata", step.desired.metadata),
      ...changesTo(stored, "spec", step.desired.spec),
    ];
    return this.#patch(stored, operations, undefined, traced);
  }

  /** The writer a reconcile's commands write other objects with: the controller's, each write counted and traced. */
  #commandWriter(traced: ReconcileTrace): CommandWriter {
    const written = (what: string, target: { readonly plural: string; readonly name: string }) => {
      this.writes++;
      this.log.debug(what, { object: `${target.plural}/${target.name}` });
    };
    return {
      patch: async (target, operations, subresource) => {
        const object = await traced.event(
          `write ${target.plural}${subresource ? `/${subresource}` : ""}`,
          () => ({ "engine.patch.paths": operations.map((operation) => operation.path).join(" ") }),
          () => this.#writer.patch(target, operations, subresource),
        );
        written("patched", target);
        return object;
      },
      remove: async (target) => {
        await traced.event(`delete ${target.plural}`, {}, () => this.#writer.remove(target));
        written("deleted", target);
      },
    };
  }

  /** Sends `operations` (the object's, or its status's) as one guarded patch; returns the object as stored now. */
  async #patch(
    stored: T,
    operations: readonly PatchOperation[],
    subresource: "status" | undefined,
    traced: ReconcileTrace,
  ): Promise<T> {
    if (operations.length === 0) return stored;
    const { namespace, name = "", resourceVersion = "", uid } = stored.metadata;
    const kind = this.#kind.definition.kind;
    const written = await traced.event(
      `write ${kind}${subresource ? `/${subresource}` : ""}`,
      () => ({ "engine.patch.paths": operations.map((operation) => operation.path).join(" ") }),
      () =>
        this.#writer.patch(
          {
            ...this.#kind.definition.resource,
            ...(namespace ? { namespace } : {}),
            name,
            resourceVersion,
            ...(uid ? { uid } : {}),
          },
          operations,
          subresource,
        ),
    );
    if (!written) return stored;
    const object = written as unknown as T;
    const key = namespace ? `${namespace}/${name}` : name;
    this.writes++;
    this.#ownWrites.wrote(key, object);
    this.log.debug("patched", {
      key,
      part: subresource ?? "object",
      paths: operations.map((operation) => operation.path),
    });
    return object;
  }

  #tellObservers(object: T, steps: readonly AnyStep[]): void {
    const resource = {
      kind: this.#kind.definition.kind,
      machine: this.#kind.definition.machine,
      metadata: object.metadata,
    };
    tellObservers(this.#options.observers, resource, steps, this.clock.now());
  }

  /** Hands the reconcile's Events to the background sender (no reconcile waits for its Events). */
  #recordEvents(object: T, events: readonly EventRecord[]): void {
    if (this.#options.recordEvents === false) return;
    const now = new Date(this.clock.now());
    const subject = {
      apiVersion: this.#kind.definition.apiVersion,
      kind: this.#kind.definition.kind,
      metadata: object.metadata,
    };
    for (const event of events) this.#writer.record(subject, event, now);
  }

  /** Objects of the kind labelled as this provider's, by status.phase (for the object-count metric). */
  #phaseCounts(): Array<{ kind: string; phase: string; count: number }> {
    const counts = new Map<string, number>();
    for (const object of this.cache.list()) {
      if (object.metadata.labels?.[LABELS.provider] !== this.#context.providerName) continue;
      const phase = object.status?.phase ?? "Unknown";
      counts.set(phase, (counts.get(phase) ?? 0) + 1);
    }
    return [...counts].map(([phase, count]) => ({ kind: this.#kind.definition.kind, phase, count }));
  }
}
