/**
 * The engine's spans, on any OpenTelemetry tracer: per object a span from its creation until its machine first
 * moves, a span per state it then leaves (but one it entered in the same reconcile: that span would last no
 * time), and per reconcile a span with its steps and writes as events and
 * each command as a span beneath it. An object's spans continue the span its `traceparent` annotation names, or the
 * object its kind links it to (an AccessRequest its Cluster), so one trace runs from a ClusterRequest through
 * its Cluster to the AccessRequest's kubeconfig Secret. Exists only when tracing is configured.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { ANNOTATIONS } from "../../api/constants.ts";
import { errorMessage } from "../../api/error-message.ts";
import { objectKey } from "../../api/object-key.ts";
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

/** Lets the next span started have chosen ids (the SDK's id generator asks it first). */
export interface IdChooser {
  choose(ids: SpanIds | undefined): void;
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
  /** A context whose parent is the object's own span, made at its first reconcile that does something. */
  context?: Context;
}

export class EngineTracing {
  readonly #tracer: Tracer;
  readonly #ids: IdChooser;
  /** Whether a trace of the engine's own is recorded (the SDK's sampler's decision on its id). */
  readonly #sampled: (traceId: string) => boolean;
  /** Per object uid: the state it was last seen entering (or first seen in), and when. */
  readonly #entered = new Map<string, Entered>();
  /** Per object uid: its ids, computed once (a hash) while its annotation and link stay the same. */
  readonly #placed = new Map<string, Placed>();

  /** Exports what is pending and stops (the engine's stop waits for it). */
  readonly shutdown: () => Promise<void>;

  constructor(
    tracer: Tracer,
    ids: IdChooser,
    options: { sampled?: (traceId: string) => boolean; shutdown?: () => Promise<void> } = {},
  ) {
    this.#tracer = tracer;
    this.#ids = ids;
    this.#sampled = options.sampled ?? (() => true);
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
    const { own, parent } = placed;
    const startTime = performance.timeOrigin + performance.now();
    /** Steps that moved nothing, told only if the reconcile does something (a write, a command, a move). */
    const quiet: { name: string; time: number }[] = [];
    /** The state the reconcile reached: the span's `engine.state`, set once at its end. */
    let reached: string | undefined;
    let opened: { span: Span; context?: Context } | undefined;
    // Made at the first thing worth telling, from the reconcile's start: a reconcile that finds all as it
    // should be (every resync of a Ready object) costs no span.
    const open = () => {
      if (opened) return opened;
      placed.context ??= this.#remote(own, parent !== undefined);
      // The object's names are on its own span, the parent: attributes are much of a span's cost.
      const span = this.#tracer.startSpan(`reconcile ${kind}`, { startTime }, placed.context);
      for (const step of quiet.splice(0)) span.addEvent(step.name, step.time);
      opened = { span };
      return opened;
    };
    return {
      decided: (step) => {
        reached = step.state;
        const name = `step ${step.previousState} → ${step.state}`;
        if (step.previousState === step.state && !opened) {
          quiet.push({ name, time: performance.timeOrigin + performance.now() });
          return;
        }
        open().span.addEvent(name);
      },
      span: async (name, extra, work) => {
        const reconcile = open();
        // The context beneath the reconcile's span, made for its first command only.
        reconcile.context ??= trace.setSpan(placed.context as Context, reconcile.span);
        const inner = this.#tracer.startSpan(name, { attributes: extra }, reconcile.context);
        try {
          return await work();
        } catch (error) {
          failed(inner, error);
          throw error;
        } finally {
          inner.end();
        }
      },
      event: async (name, extra, work) => {
        const { span } = open();
        // A trace the sampler left out: nothing to record, nothing to compute.
        if (!span.isRecording()) return work();
        const started = performance.now();
        let error: unknown;
        try {
          return await work();
        } catch (thrown) {
          error = thrown;
          throw thrown;
        } finally {
          const attributes = typeof extra === "function" ? extra() : { ...extra };
          attributes["engine.duration_ms"] = Math.round((performance.now() - started) * 1000) / 1000;
          if (error !== undefined) attributes["engine.error"] = errorMessage(error);
          span.addEvent(name, attributes, performance.timeOrigin + started);
        }
      },
      stepped: (steps, at) => {
        // A state entered and left within these steps gets no span of its own: it would last no time (all
        // steps are committed at `at`), and the reconcile's span holds both steps as events.
        let enteredNow: Entered | undefined;
        for (const step of steps)
          enteredNow = this.#transition(kind, object, step, at, initialState, placed, enteredNow);
      },
      end: (error) => {
        if (error !== undefined) failed(open().span, error);
        if (!opened) return;
        if (reached !== undefined) opened.span.setAttribute("engine.state", reached);
        opened.span.end();
      },
    };
  }

  /** Forgets an object that went away. */
  forget(uid: string): void {
    this.#entered.delete(uid);
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
    const placed = { annotation, linked: linkedUid, own: objectSpanIds(uid, parent), parent };
    this.#placed.set(uid, placed);
    return placed;
  }

  /**
   * On a transition: the object's span (creation → leaving its first state), else a span for the state it left
   * (entered → left), unless it entered it in the same commit (`enteredNow`); a state entered before this
   * engine started is reckoned from when it first saw it. Returns what it records as entered now, if anything.
   */
  #transition(
    kind: string,
    object: TracedObject,
    step: Transition,
    at: number,
    initialState: string,
    { own, parent: parentIds }: Placed,
    enteredNow: Entered | undefined,
  ): Entered | undefined {
    const uid = object.metadata.uid ?? "";
    const entered = this.#entered.get(uid);
    if (step.previousState === step.state) {
      if (entered) return enteredNow;
      const first = { state: step.state, at };
      this.#entered.set(uid, first);
      return first;
    }
    if (step.previousState === initialState) {
      const attributes = { ...objectAttributes(kind, object), "engine.state": step.previousState };
      const created = object.metadata.creationTimestamp;
      const startTime = created ? new Date(created).getTime() : (entered?.at ?? at);
      const parent = parentIds ? this.#remote(parentIds, true) : ROOT_CONTEXT;
      this.#ids.choose(own);
      try {
        this.#tracer
          .startSpan(
            `${kind} ${objectKey(object)}`,
            { attributes, startTime: Math.min(startTime, at) },
            parent,
          )
          .end(at);
      } finally {
        this.#ids.choose(undefined);
      }
    } else if (entered && entered.state === step.previousState && entered !== enteredNow) {
      this.#tracer
        .startSpan(
          `${kind} ${step.previousState}`,
          { attributes: { "engine.state": step.previousState }, startTime: entered.at },
          this.#remote(own, true),
        )
        .end(at);
    }
    const now = { state: step.state, at };
    this.#entered.set(uid, now);
    return now;
  }

  /** A context whose parent is the span `ids`; a trace of the engine's own is sampled as the sampler decides. */
  #remote(ids: SpanIds, continued: boolean): Context {
    const sampled = continued || this.#sampled(ids.traceId);
    return trace.setSpanContext(ROOT_CONTEXT, {
      ...ids,
      isRemote: true,
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    });
  }
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

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
}
