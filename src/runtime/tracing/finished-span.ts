/**
 * A span the engine hands OpenTelemetry's span processor already finished: the SDK's `ReadableSpan`, made in
 * one small object from what the engine measured, instead of through the SDK's Tracer (a sampler call, a
 * `SpanImpl`, attribute cleaning and span metrics per span, contexts per parent). The batch processor and the
 * OTLP exporters take it as they take the SDK's own spans (see docs/traces.md, "What it costs"). Pure.
 */
import type { Attributes, HrTime, SpanContext, SpanStatus } from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace";

/** What every span of one engine shares: the SDK's span processor takes spans grouped by these two objects. */
export interface SpanSource {
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
}

/** `TraceFlags.SAMPLED`: the engine makes only the spans it records. */
const SAMPLED = 1;
/** `SpanKind.INTERNAL`. */
const INTERNAL = 0;
const UNSET: SpanStatus = { code: 0 };
const NO_LINKS = Object.freeze([]) as unknown as never[];
/** Shared by every span without events: nothing adds to a finished span's. */
const NO_EVENTS = Object.freeze([]) as unknown as TimedEvent[];

/** `ms` since the epoch as OpenTelemetry's [seconds, nanoseconds]: whole milliseconds exactly, nanos < 1e9. */
export function hrTime(ms: number): HrTime {
  const seconds = Math.trunc(ms / 1000);
  const nanos = Math.round((ms % 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

/** The context of a sampled span, as a child names its parent (`isRemote` when it came from another process). */
export function sampledContext(traceId: string, spanId: string, isRemote: boolean): SpanContext {
  return isRemote
    ? { traceId, spanId, traceFlags: SAMPLED, isRemote }
    : { traceId, spanId, traceFlags: SAMPLED };
}

/**
 * An ended, sampled, internal span without links. A start after its end is moved to the end, with no
 * duration, as the SDK's `Span.end` does.
 */
export class FinishedSpan implements ReadableSpan {
  readonly name: string;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly attributes: Attributes;
  readonly events: TimedEvent[];
  readonly status: SpanStatus;
  readonly droppedEventsCount: number;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly #context: SpanContext;

  constructor(
    source: SpanSource,
    name: string,
    traceId: string,
    spanId: string,
    parent: SpanContext | undefined,
    start: number,
    end: number,
    attributes: Attributes,
    events: TimedEvent[] = NO_EVENTS,
    status: SpanStatus = UNSET,
    droppedEventsCount = 0,
  ) {
    this.name = name;
    this.#context = { traceId, spanId, traceFlags: SAMPLED };
    this.parentSpanContext = parent;
    this.startTime = hrTime(start);
    this.endTime = end < start ? this.startTime : hrTime(end);
    this.attributes = attributes;
    this.events = events;
    this.status = status;
    this.droppedEventsCount = droppedEventsCount;
    this.resource = source.resource;
    this.instrumentationScope = source.instrumentationScope;
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  /** End − start, made when asked (the OTLP exporters never ask). */
  get duration(): HrTime {
    const [startSeconds, startNanos] = this.startTime;
    const [endSeconds, endNanos] = this.endTime;
    return endNanos < startNanos
      ? [endSeconds - startSeconds - 1, endNanos - startNanos + 1e9]
      : [endSeconds - startSeconds, endNanos - startNanos];
  }

  get kind(): 0 {
    return INTERNAL;
  }
  get links(): never[] {
    return NO_LINKS;
  }
  get ended(): true {
    return true;
  }
  get droppedAttributesCount(): number {
    return 0;
  }
  get droppedLinksCount(): number {
    return 0;
  }
}
