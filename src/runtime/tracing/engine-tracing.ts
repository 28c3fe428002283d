/**
 * The engine's spans, on any OpenTelemetry tracer: per object a span from its creation until its machine first
 * moves, a span per state it then leaves, and per reconcile a span with the look, the step, each write and
 * each command beneath it. An object's spans continue the span its `traceparent` annotation names, or the
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

/** One reconcile's span, and the spans beneath it. */
export interface ReconcileTrace {
  /** Runs `work` in a child span named `name`; its failure is recorded on the span and rethrown. */
  span<R>(name: string, attributes: Attributes, work: () => Promise<R>): Promise<R>;
  /** The same for synchronous work (the pure step). */
  spanSync<R>(name: string, attributes: Attributes, work: () => R): R;
  /** Records the machine's transitions of this reconcile (object and state spans), at `at` ms. */
  stepped(steps: readonly Transition[], at: number): void;
  end(error?: unknown): void;
}

const SAMPLED = { traceFlags: TraceFlags.SAMPLED, isRemote: true } as const;

export class EngineTracing {
  readonly #tracer: Tracer;
  readonly #ids: IdChooser;
  /** Whether a trace of the engine's own is recorded (the SDK's sampler's decision on its id). */
  readonly #sampled: (traceId: string) => boolean;
  /** Per object uid: the state it was last seen entering (or first seen in), and when. */
  readonly #entered = new Map<string, { state: string; at: number }>();

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

  /** The span an object's spans continue: its annotation's, else the linked object's own span, else none. */
  parentOf(object: TracedObject, linked?: TracedObject): SpanIds | undefined {
    const annotated = parseTraceparent(object.metadata.annotations?.[ANNOTATIONS.traceparent]);
    if (annotated) return annotated;
    return linked ? this.spanOf(linked) : undefined;
  }

  /** The object's own span (see {@link objectSpanIds}); `linked` as for {@link parentOf}. */
  spanOf(object: TracedObject, linked?: TracedObject): SpanIds {
    return objectSpanIds(object.metadata.uid ?? "", this.parentOf(object, linked));
  }

  /** The `traceparent` to write on an object made for this one (the scheduler's Cluster for its request). */
  traceparentOf(object: TracedObject): string {
    return formatTraceparent(this.spanOf(object));
  }

  /** Starts the span of one reconcile of `object`, beneath the object's span. */
  startReconcile(
    kind: string,
    object: TracedObject,
    initialState: string,
    linked?: TracedObject,
  ): ReconcileTrace {
    const own = this.spanOf(object, linked);
    const parentIds = this.parentOf(object, linked);
    const attributes = objectAttributes(kind, object);
    const objectContext = this.#remote(own, parentIds !== undefined);
    const span = this.#tracer.startSpan(`reconcile ${kind}`, { attributes }, objectContext);
    const context = trace.setSpan(objectContext, span);
    const child = (name: string, extra: Attributes) =>
      this.#tracer.startSpan(name, { attributes: extra }, context);
    return {
      span: async (name, extra, work) => {
        const inner = child(name, extra);
        try {
          return await work();
        } catch (error) {
          failed(inner, error);
          throw error;
        } finally {
          inner.end();
        }
      },
      spanSync: (name, extra, work) => {
        const inner = child(name, extra);
        try {
          return work();
        } catch (error) {
          failed(inner, error);
          throw error;
        } finally {
          inner.end();
        }
      },
      stepped: (steps, at) => {
        span.setAttribute("engine.state", steps.at(-1)?.state ?? "");
        for (const step of steps) this.#transition(kind, object, step, at, initialState, own, parentIds);
      },
      end: (error) => {
        if (error !== undefined) failed(span, error);
        span.end();
      },
    };
  }

  /** Forgets an object that went away. */
  forget(uid: string): void {
    this.#entered.delete(uid);
  }

  /**
   * On a transition: the object's span (creation → leaving its first state), else a span for the state it left
   * (entered → left); a state entered before this engine started is reckoned from when it first saw it.
   */
  #transition(
    kind: string,
    object: TracedObject,
    step: Transition,
    at: number,
    initialState: string,
    own: SpanIds,
    parentIds: SpanIds | undefined,
  ): void {
    const uid = object.metadata.uid ?? "";
    const entered = this.#entered.get(uid);
    if (step.previousState === step.state) {
      if (!entered) this.#entered.set(uid, { state: step.state, at });
      return;
    }
    const attributes = { ...objectAttributes(kind, object), "engine.state": step.previousState };
    if (step.previousState === initialState) {
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
    } else if (entered && entered.state === step.previousState) {
      this.#tracer
        .startSpan(
          `${kind} ${step.previousState}`,
          { attributes, startTime: entered.at },
          this.#remote(own, true),
        )
        .end(at);
    }
    this.#entered.set(uid, { state: step.state, at });
  }

  /** A context whose parent is the span `ids`; a trace of the engine's own is sampled as the sampler decides. */
  #remote(ids: SpanIds, continued: boolean): Context {
    const sampled = continued || this.#sampled(ids.traceId);
    return trace.setSpanContext(ROOT_CONTEXT, {
      ...ids,
      ...SAMPLED,
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
