/**
 * The engine's spans, made finished ({@link FinishedSpan}) and handed to OpenTelemetry's batch span processor,
 * which exports them as it does the SDK's own: per object a span from its creation until its machine first
 * moves, a span per state it then leaves (but one it entered in the same reconcile: that span would last no
 * time), and per reconcile a span with its steps and writes as events and each command as a span beneath it.
 * An object's spans continue the span its `traceparent` annotation names, or the object its kind links it to
 * (an AccessRequest its Cluster), so one trace runs from a ClusterRequest through its Cluster to the
 * AccessRequest's kubeconfig Secret. A trace the sampler leaves out costs no span at all. Exists only when
 * tracing is configured.
 */
import type { Attributes, SpanContext, SpanStatus } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace";
import { ANNOTATIONS } from "../../api/constants.ts";
import { errorMessage } from "../../api/error-message.ts";
import { objectKey } from "../../api/object-key.ts";
import { FinishedSpan, hrTime, type SpanSource, sampledContext } from "./finished-span.ts";
import { formatTraceparent, objectSpanIds, parseTraceparent, type SpanIds } from "./trace-ids.ts";

/** What the engine's spans are made of: an object's identity and the annotation it may carry. */
export interface TracedObject {
  readonly metadata: {
    readonly uid?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly creationTimestamp?: string | Date;
    readonly annotations?: Readonly<Record<string, string>>;
  };
}

/** Where finished spans go: OpenTelemetry's batch span processor (which exports only sampled ones). */
export interface SpanSink {
  onEnd(span: ReadableSpan): void;
}

/** What the engine's spans need of OpenTelemetry's SDK (see otel-sdk.ts). */
export interface EngineTracingOptions {
  readonly sink: SpanSink;
  /** The resource every span names (the service). */
  readonly resource: Resource;
  /** A random span id (a state's span, a reconcile's, a command's). */
  readonly newSpanId: () => string;
  /**
   * Whether the trace `traceId` is recorded, the sampler's decision: `continued` when the object continues a
   * span of another object or process (a parent-based sampler follows it). Default: every trace.
   */
  readonly recorded?: (traceId: string, continued: boolean) => boolean;
  /** Exports what is pending and stops. */
  readonly shutdown?: () => Promise<void>;
}

/** A committed step as the controller reports it. */
interface Transition {
  readonly previousState: string;
  readonly state: string;
}

/**
 * One reconcile's span, beneath its object's: each step it took (one round of look → pure step → writes →
 * commands) and each write are timed events of it, each command a span beneath it. Spans are few on purpose:
 * a span costs the engine several times what an event does (see docs/traces.md).
 */
export interface ReconcileTrace {
  /** Records the step the machine took (an event `step <before> → <after>`; the span's `engine.state`). */
  decided(step: Transition): void;
  /** Runs `work` in a span beneath the reconcile's; its failure is recorded on the span and rethrown. */
  span<R>(name: string, attributes: Attributes, work: () => Promise<R>): Promise<R>;
  /**
   * Runs `work` and records it as a timed event of the reconcile's span (`engine.duration_ms`, and
   * `engine.error` if it failed): for short, frequent work (a write to the API server). `attributes` may be a
   * function, called only if the event is recorded (a trace the sampler left out records nothing).
   */
  event<R>(name: string, attributes: Attributes | (() => Attributes), work: () => Promise<R>): Promise<R>;
  /** Records the machine's transitions once committed (object and state spans), at `at` ms. */
  stepped(steps: readonly Transition[], at: number): void;
  /** Ends the reconcile's span, marked failed with `error`'s message if given. */
  end(error?: unknown): void;
}

/** The state an object was last seen entering (or first seen in), and when. */
interface Entered {
  readonly state: string;
  readonly at: number;
}

/** An object's place in its trace, as computed for one annotation value (kept until the object goes). */
interface Placed {
  readonly annotation: string | undefined;
  readonly linked: string | undefined;
  readonly own: SpanIds;
  readonly parent: SpanIds | undefined;
  /** Whether its trace is recorded: the sampler's decision, made once per placement. */
  readonly recorded: boolean;
  /** Its own span as its reconciles' and states' spans name their parent, made at the first one. */
  context?: SpanContext;
}

/** What one engine's tracing keeps across reconciles, and where its spans go. */
interface Tracks {
  readonly sink: SpanSink;
  readonly source: SpanSource;
  readonly newSpanId: () => string;
  /** Per object uid: the state it was last seen entering (or first seen in), and when. */
  readonly entered: Map<string, Entered>;
}

/** Events a span holds at most; more drop the oldest (the SDK's default limit). */
const EVENT_LIMIT = 128;

export class EngineTracing {
  readonly #tracks: Tracks;
  readonly #recorded: (traceId: string, continued: boolean) => boolean;
  /** Per object uid: its ids, computed once (a hash) while its annotation and link stay the same. */
  readonly #placed = new Map<string, Placed>();

  /** Exports what is pending and stops (the engine's stop waits for it). */
  readonly shutdown: () => Promise<void>;

  constructor(options: EngineTracingOptions) {
    this.#tracks = {
      sink: options.sink,
      source: { resource: options.resource, instrumentationScope: { name: "openmcp-engine" } },
      newSpanId: options.newSpanId,
      entered: new Map(),
    };
    this.#recorded = options.recorded ?? (() => true);
    this.shutdown = options.shutdown ?? (async () => {});
  }

  /** The `traceparent` to write on an object made for this one (the scheduler's Cluster for its request). */
  traceparentOf(object: TracedObject): string {
    return formatTraceparent(this.#place(object, undefined).own);
  }

  /** Starts tracing one reconcile of `object`: its steps' spans go beneath the object's span. */
  startReconcile(
    kind: string,
    object: TracedObject,
    initialState: string,
    linked?: TracedObject,
  ): ReconcileTrace {
    const placed = this.#place(object, linked);
    return placed.recorded
      ? new RecordedReconcile(this.#tracks, kind, object, initialState, placed)
      : new UnrecordedReconcile(this.#tracks, kind, object, initialState, placed);
  }

  /** Forgets an object that went away. */
  forget(uid: string): void {
    this.#tracks.entered.delete(uid);
    this.#placed.delete(uid);
  }

  /**
   * The object's own span ({@link objectSpanIds}) and the span it continues: its annotation's, else the linked
   * object's own span, else none.
   */
  #place(object: TracedObject, linked: TracedObject | undefined): Placed {
    const uid = object.metadata.uid ?? "";
    const annotation = object.metadata.annotations?.[ANNOTATIONS.traceparent];
    const linkedUid = linked?.metadata.uid;
    const known = this.#placed.get(uid);
    if (known && known.annotation === annotation && known.linked === linkedUid) return known;
    const parent = parseTraceparent(annotation) ?? (linked ? this.#place(linked, undefined).own : undefined);
    const own = objectSpanIds(uid, parent);
    const recorded = this.#recorded(own.traceId, parent !== undefined);
    const placed: Placed = { annotation, linked: linkedUid, own, parent, recorded };
    this.#placed.set(uid, placed);
    return placed;
  }
}

/** `performance.timeOrigin`, read once (a getter that computes it each time). */
const TIME_ORIGIN = performance.timeOrigin;
/** The clock of a reconcile's span, its events and its commands: ms since the epoch, monotonic. */
const now = () => TIME_ORIGIN + performance.now();

/** What every reconcile's trace knows of its object, and the states it tracks for the object's next spans. */
abstract class ObjectReconcile {
  protected readonly tracks: Tracks;
  protected readonly kind: string;
  protected readonly object: TracedObject;
  protected readonly initialState: string;
  protected readonly placed: Placed;

  constructor(tracks: Tracks, kind: string, object: TracedObject, initialState: string, placed: Placed) {
    this.tracks = tracks;
    this.kind = kind;
    this.object = object;
    this.initialState = initialState;
    this.placed = placed;
  }

  stepped(steps: readonly Transition[], at: number): void {
    stepped(this.tracks, this.kind, this.object, this.initialState, this.placed, steps, at);
  }
}

/**
 * A reconcile in a trace the sampler leaves out: the work, and what the object entered (were its trace recorded
 * later, a new `traceparent`, its states' spans start there).
 */
class UnrecordedReconcile extends ObjectReconcile implements ReconcileTrace {
  decided(): void {}
  span<R>(_name: string, _attributes: Attributes, work: () => Promise<R>): Promise<R> {
    return work();
  }
  event<R>(_name: string, _attributes: unknown, work: () => Promise<R>): Promise<R> {
    return work();
  }
  end(): void {}
}

/**
 * A reconcile in a recorded trace. Its span is opened at the first thing worth telling (its span id drawn
 * then), from the reconcile's start: a reconcile that finds all as it should be (every resync of a Ready
 * object) costs no span. Its events are gathered here and the span handed over finished at its end.
 */
class RecordedReconcile extends ObjectReconcile implements ReconcileTrace {
  readonly #start = now();
  /** Its span's id, once opened. */
  #spanId: string | undefined;
  /** Its span as its commands name their parent, made for its first command. */
  #context: SpanContext | undefined;
  /** Its events; before it is opened, the steps that moved nothing (told only if it does something). */
  #events: TimedEvent[] | undefined;
  #droppedEvents = 0;
  /** The state the reconcile reached: the span's `engine.state`, set at its end. */
  #reached: string | undefined;
  #status: SpanStatus | undefined;
  #ended = false;

  decided(step: Transition): void {
    this.#reached = step.state;
    const name = `step ${step.previousState} → ${step.state}`;
    if (step.previousState !== step.state) this.#open();
    this.#add({ name, time: hrTime(now()) });
  }

  async span<R>(name: string, extra: Attributes, work: () => Promise<R>): Promise<R> {
    const spanId = this.#open();
    const { traceId } = this.placed.own;
    this.#context ??= sampledContext(traceId, spanId, false);
    const parent = this.#context;
    const id = this.tracks.newSpanId();
    const attributes = defined(extra, false);
    const start = now();
    let status: SpanStatus | undefined;
    try {
      return await work();
    } catch (error) {
      status = failure(error);
      throw error;
    } finally {
      const { sink, source } = this.tracks;
      sink.onEnd(
        new FinishedSpan(source, name, traceId, id, parent, start, now(), attributes, undefined, status),
      );
    }
  }

  async event<R>(name: string, extra: Attributes | (() => Attributes), work: () => Promise<R>): Promise<R> {
    this.#open();
    const started = performance.now();
    let error: unknown;
    try {
      return await work();
    } catch (thrown) {
      error = thrown;
      throw thrown;
    } finally {
      if (!this.#ended) {
        // The function's object is the event's own; the caller's object is copied, as the SDK does.
        const attributes = typeof extra === "function" ? defined(extra(), true) : defined(extra, false);
        attributes["engine.duration_ms"] = Math.round((performance.now() - started) * 1000) / 1000;
        if (error !== undefined) attributes["engine.error"] = errorMessage(error);
        this.#add({ name, time: hrTime(TIME_ORIGIN + started), attributes });
      }
    }
  }

  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    if (error !== undefined) {
      this.#open();
      this.#status = failure(error);
    }
    if (this.#spanId === undefined) return;
    const { own } = this.placed;
    const attributes: Attributes = this.#reached === undefined ? {} : { "engine.state": this.#reached };
    this.tracks.sink.onEnd(
      new FinishedSpan(
        this.tracks.source,
        `reconcile ${this.kind}`,
        own.traceId,
        this.#spanId,
        ownContext(this.placed),
        this.#start,
        now(),
        attributes,
        this.#events,
        this.#status,
        this.#droppedEvents,
      ),
    );
  }

  /** Opens the reconcile's span (draws its id) if it is not yet; its id. */
  #open(): string {
    this.#spanId ??= this.tracks.newSpanId();
    return this.#spanId;
  }

  /** An event of the span (nothing once it ended), the oldest dropped beyond {@link EVENT_LIMIT}. */
  #add(event: TimedEvent): void {
    if (this.#ended) return;
    this.#events ??= [];
    const events = this.#events;
    if (events.length >= EVENT_LIMIT) {
      events.shift();
      this.#droppedEvents++;
    }
    events.push(event);
  }
}

/** The object's own span as a child names it (from another process, as its annotation names it). */
function ownContext(placed: Placed): SpanContext {
  placed.context ??= sampledContext(placed.own.traceId, placed.own.spanId, true);
  return placed.context;
}

/**
 * Records the machine's committed transitions. A state entered and left within these steps gets no span of
 * its own: it would last no time (all steps are committed at `at`), and the reconcile's span holds both steps
 * as events.
 */
function stepped(
  tracks: Tracks,
  kind: string,
  object: TracedObject,
  initialState: string,
  placed: Placed,
  steps: readonly Transition[],
  at: number,
): void {
  let enteredNow: Entered | undefined;
  for (const step of steps)
    enteredNow = transition(tracks, kind, object, step, at, initialState, placed, enteredNow);
}

/**
 * On a transition: the object's span (creation → leaving its first state), else a span for the state it left
 * (entered → left), unless it entered it in the same commit (`enteredNow`); a state entered before this
 * engine started is reckoned from when it first saw it. Spans only for a recorded trace; what it entered is
 * remembered in any case. Returns what it records as entered now, if anything.
 */
function transition(
  tracks: Tracks,
  kind: string,
  object: TracedObject,
  step: Transition,
  at: number,
  initialState: string,
  placed: Placed,
  enteredNow: Entered | undefined,
): Entered | undefined {
  const uid = object.metadata.uid ?? "";
  const entered = tracks.entered.get(uid);
  if (step.previousState === step.state) {
    if (entered) return enteredNow;
    const first = { state: step.state, at };
    tracks.entered.set(uid, first);
    return first;
  }
  if (placed.recorded) {
    const { own, parent } = placed;
    if (step.previousState === initialState) {
      const attributes = { ...objectAttributes(kind, object), "engine.state": step.previousState };
      const created = object.metadata.creationTimestamp;
      const startTime = created ? new Date(created).getTime() : (entered?.at ?? at);
      tracks.sink.onEnd(
        new FinishedSpan(
          tracks.source,
          `${kind} ${objectKey(object)}`,
          own.traceId,
          own.spanId,
          parent ? sampledContext(parent.traceId, parent.spanId, true) : undefined,
          Math.min(startTime, at),
          at,
          attributes,
        ),
      );
    } else if (entered && entered.state === step.previousState && entered !== enteredNow) {
      tracks.sink.onEnd(
        new FinishedSpan(
          tracks.source,
          `${kind} ${step.previousState}`,
          own.traceId,
          tracks.newSpanId(),
          ownContext(placed),
          entered.at,
          at,
          { "engine.state": step.previousState },
        ),
      );
    }
  }
  const next = { state: step.state, at };
  tracks.entered.set(uid, next);
  return next;
}

/** The attributes that name an object on every span about it. */
function objectAttributes(kind: string, object: TracedObject): Attributes {
  return {
    "k8s.object.kind": kind,
    ...(object.metadata.namespace ? { "k8s.namespace.name": object.metadata.namespace } : {}),
    "k8s.object.name": object.metadata.name ?? "",
    "k8s.object.uid": object.metadata.uid ?? "",
  };
}

/**
 * The attributes without the absent ones (the SDK drops them too): `attributes` itself when it is `fresh` (made
 * for this span or event alone) and holds none, else a copy.
 */
function defined(attributes: Attributes, fresh: boolean): Attributes {
  const keys = Object.keys(attributes);
  if (fresh && keys.every((key) => attributes[key] !== undefined && attributes[key] !== null))
    return attributes;
  const copy: Attributes = {};
  for (const key of keys) {
    const value = attributes[key];
    if (value !== undefined && value !== null) copy[key] = value;
  }
  return copy;
}

function failure(error: unknown): SpanStatus {
  return { code: 2 /* SpanStatusCode.ERROR */, message: errorMessage(error) };
}
