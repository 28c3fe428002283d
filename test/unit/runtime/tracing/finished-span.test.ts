/**
 * A finished span as the engine hands it to OpenTelemetry's span processor: exact times, a sampled internal
 * span, and what OpenTelemetry's own OTLP serializer (the exporters') makes of it.
 */
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { FinishedSpan, hrTime, sampledContext } from "../../../../src/runtime/tracing/finished-span.ts";

const SOURCE = {
  resource: resourceFromAttributes({ "service.name": "test" }),
  instrumentationScope: { name: "openmcp-engine" },
};
const TRACE = "0af7651916cd43dd8448eb211c80319c";
const T0 = Date.parse("2026-11-28T10:00:00Z");

describe("hrTime", () => {
  it("gives whole milliseconds exactly and never 1e9 nanoseconds", () => {
    expect(hrTime(T0)).toEqual([T0 / 1000, 0]);
    expect(hrTime(T0 + 1_001)).toEqual([T0 / 1000 + 1, 1_000_000]);
    expect(hrTime(T0 + 0.25)).toEqual([T0 / 1000, 250_000]);
    const [seconds, nanos] = hrTime(T0 + 999.9999999);
    expect(nanos).toBeLessThan(1e9);
    expect(seconds * 1e9 + nanos).toBeCloseTo((T0 + 1_000) * 1e6, -3);
  });
});

describe("FinishedSpan", () => {
  it("is an ended, sampled, internal span with its duration", () => {
    const span = new FinishedSpan(
      SOURCE,
      "x",
      TRACE,
      "b7ad6b7169203331",
      undefined,
      T0 + 0.75,
      T0 + 2_000.5,
      {},
    );
    expect(span.spanContext()).toEqual({ traceId: TRACE, spanId: "b7ad6b7169203331", traceFlags: 1 });
    expect([span.kind, span.ended, span.links, span.events, span.status]).toEqual([
      0,
      true,
      [],
      [],
      { code: 0 },
    ]);
    expect(span.duration).toEqual([1, 999_750_000]);
    expect([span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount]).toEqual([0, 0, 0]);
  });

  it("ends no earlier than it starts, as the SDK's span does", () => {
    const span = new FinishedSpan(SOURCE, "x", TRACE, "b7ad6b7169203331", undefined, T0 + 5, T0 + 4, {});
    expect([span.endTime, span.duration]).toEqual([span.startTime, [0, 0]]);
  });

  it("serializes as OTLP with its parent, remote or not, its events and its status", () => {
    const remote = new FinishedSpan(
      SOURCE,
      "reconcile Cluster",
      TRACE,
      "b7ad6b7169203331",
      sampledContext(TRACE, "00f067aa0ba902b7", true),
      T0 + 0.25,
      T0 + 1_000,
      { "engine.state": "ready" },
      [{ name: "write Cluster", time: hrTime(T0 + 1), attributes: { "engine.duration_ms": 0.5 } }],
      { code: 2, message: "refused" },
    );
    const local = new FinishedSpan(
      SOURCE,
      "command create",
      TRACE,
      "b7ad6b7169203332",
      sampledContext(TRACE, "b7ad6b7169203331", false),
      T0,
      T0,
      {},
    );
    const sent = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest([remote, local])));
    const [scope] = sent.resourceSpans[0].scopeSpans;
    expect(scope.scope).toEqual({ name: "openmcp-engine" });
    expect(scope.spans[0]).toMatchObject({
      traceId: TRACE,
      spanId: "b7ad6b7169203331",
      parentSpanId: "00f067aa0ba902b7",
      kind: 1, // INTERNAL
      startTimeUnixNano: `${T0 / 1000}000250000`,
      endTimeUnixNano: `${T0 / 1000 + 1}000000000`,
      attributes: [{ key: "engine.state", value: { stringValue: "ready" } }],
      events: [{ name: "write Cluster", timeUnixNano: `${T0 / 1000}001000000` }],
      status: { code: 2, message: "refused" },
      flags: 0x301, // sampled, parent's remoteness known, remote
    });
    expect(scope.spans[1]).toMatchObject({ parentSpanId: "b7ad6b7169203331", flags: 0x101 });
  });
});
