/**
 * The engine's spans, on OpenTelemetry's own SDK with the spans held in memory: a ClusterRequest's trace
 * holds the Cluster made for it (its traceparent annotation) and the AccessRequest linked to it, each object
 * one span from its creation until its machine first moves, a span per state it leaves, and per reconcile a
 * span with its steps and writes as timed events and its commands as spans beneath it.
 */
import type { ExportResult } from "@opentelemetry/core";
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/runtime/logger.ts";
import type { TracedObject } from "../../../../src/runtime/tracing/engine-tracing.ts";
import { startTracing } from "../../../../src/runtime/tracing/otel-sdk.ts";
import { type TracingSettings, tracingSettings } from "../../../../src/runtime/tracing/otel-settings.ts";
import { objectSpanIds } from "../../../../src/runtime/tracing/trace-ids.ts";

/** The engine's defaults, as the variables give them (service name aside). */
const SETTINGS = {
  ...(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://unused:4317" }) as TracingSettings),
  serviceName: "test",
};
const T0 = Date.parse("2026-11-28T10:00:00Z");

/** Keeps what it was given past the SDK's shutdown (InMemorySpanExporter forgets on shutdown). */
function keeping(): { exporter: SpanExporter; spans: () => ReadableSpan[] } {
  const inner = new InMemorySpanExporter();
  return {
    exporter: {
      export: (spans, done: (result: ExportResult) => void) => inner.export(spans, done),
      shutdown: async () => {},
    },
    spans: () => inner.getFinishedSpans(),
  };
}

const object = (uid: string, name: string, annotations?: Record<string, string>): TracedObject => ({
  metadata: {
    uid,
    namespace: "demo",
    name,
    creationTimestamp: new Date(T0).toISOString(),
    ...(annotations ? { annotations } : {}),
  },
});

type Tracing = Awaited<ReturnType<typeof startTracing>>;

async function traced(record: (tracing: Tracing) => Promise<void>, settings: TracingSettings = SETTINGS) {
  const held = keeping();
  const tracing = await startTracing(settings, silentLogger, held.exporter);
  await record(tracing);
  await tracing.shutdown();
  return held.spans();
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** One reconcile with one write of a ClusterRequest continuing the trace its `traceparent` names. */
async function reconcileContinued(tracing: Tracing): Promise<void> {
  const continued = object("r2", "continued", {
    "engine.openmcp.cloud/traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  });
  const reconcile = tracing.startReconcile("ClusterRequest", continued, "pending");
  await reconcile.event("write ClusterRequest", {}, async () => {});
  reconcile.end();
}

describe("EngineTracing", () => {
  it("puts a ClusterRequest, the Cluster made for it and an AccessRequest linked to it in one trace", async () => {
    const request = object("req-uid", "mcp");
    const spans = await traced(async (tracing) => {
      const cluster = object("cl-uid", "mcp-abc", {
        "engine.openmcp.cloud/traceparent": tracing.traceparentOf(request),
      });
      const access = object("ar-uid", "viewer");
      const first = tracing.startReconcile("ClusterRequest", request, "pending");
      first.decided({ previousState: "pending", state: "scheduling" });
      await first.event(
        "write ClusterRequest",
        { "engine.patch.paths": "/metadata/finalizers" },
        async () => {},
      );
      await first.span("command create Cluster demo/mcp-abc", {}, async () => {});
      first.decided({ previousState: "scheduling", state: "scheduling" }); // a second round
      await first.event("write ClusterRequest/status", {}, async () => {});
      first.stepped([{ previousState: "pending", state: "scheduling" }], T0 + 1_000);
      first.end();
      const again = tracing.startReconcile("ClusterRequest", request, "pending");
      again.decided({ previousState: "scheduling", state: "granted" });
      again.stepped([{ previousState: "scheduling", state: "granted" }], T0 + 2_000);
      again.end();
      const provisioning = tracing.startReconcile("Cluster", cluster, "pending");
      provisioning.stepped([{ previousState: "pending", state: "provisioning" }], T0 + 3_000);
      provisioning.end();
      const granting = tracing.startReconcile("AccessRequest", access, "pending", request);
      await granting.span("command issueCredential", {}, async () => {});
      granting.stepped([{ previousState: "pending", state: "granted" }], T0 + 9_000);
      granting.end();
    });

    const ids = (uid: string, parent?: ReturnType<typeof objectSpanIds>) => objectSpanIds(uid, parent);
    const requestIds = ids("req-uid");
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([requestIds.traceId]));
    const named = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(found, `spans named ${name}`).toHaveLength(1);
      return found[0] as ReadableSpan;
    };
    // Each object's span: its chosen id, from its creation to its first move, beneath the object it continues.
    const requestSpan = named("ClusterRequest demo/mcp");
    expect(requestSpan.spanContext().spanId).toBe(requestIds.spanId);
    expect(parentOf(requestSpan)).toBeUndefined();
    expect([requestSpan.startTime, requestSpan.endTime]).toEqual([
      [T0 / 1000, 0],
      [T0 / 1000 + 1, 0],
    ]);
    const clusterSpan = named("Cluster demo/mcp-abc");
    expect(clusterSpan.spanContext().spanId).toBe(ids("cl-uid").spanId);
    expect(parentOf(clusterSpan)).toBe(requestIds.spanId);
    const accessSpan = named("AccessRequest demo/viewer");
    expect(parentOf(accessSpan)).toBe(requestIds.spanId);
    expect(accessSpan.endTime).toEqual([T0 / 1000 + 9, 0]);
    // The state it left, from when it entered it, beneath the object's span.
    const scheduling = named("ClusterRequest scheduling");
    expect([scheduling.startTime, scheduling.endTime]).toEqual([
      [T0 / 1000 + 1, 0],
      [T0 / 1000 + 2, 0],
    ]);
    expect(parentOf(scheduling)).toBe(requestIds.spanId);
    // A reconcile beneath its object, with the state it reached; its steps and writes timed events of it, its
    // commands spans beneath it.
    const reconciles = spans.filter((span) => span.name === "reconcile ClusterRequest");
    expect(reconciles.map((span) => span.attributes["engine.state"])).toEqual(["scheduling", "granted"]);
    for (const reconcile of reconciles) expect(parentOf(reconcile)).toBe(requestIds.spanId);
    const [scheduled] = reconciles;
    expect(scheduled?.events.map((event) => event.name)).toEqual([
      "step pending → scheduling",
      "write ClusterRequest",
      "step scheduling → scheduling",
      "write ClusterRequest/status",
    ]);
    expect(scheduled?.events[1]?.attributes).toMatchObject({
      "engine.patch.paths": "/metadata/finalizers",
      "engine.duration_ms": expect.any(Number),
    });
    expect(parentOf(named("command create Cluster demo/mcp-abc"))).toBe(scheduled?.spanContext().spanId);
    expect(parentOf(named("command issueCredential"))).toBe(
      named("reconcile AccessRequest").spanContext().spanId,
    );
    expect(accessSpan.attributes).toMatchObject({
      "k8s.object.kind": "AccessRequest",
      "k8s.namespace.name": "demo",
      "k8s.object.name": "viewer",
      "k8s.object.uid": "ar-uid",
    });
  });

  it("makes no span of a reconcile that finds all as it should be, and tells its quiet steps when it does more", async () => {
    const spans = await traced(async (tracing) => {
      const cluster = object("cl-uid", "c");
      const atRest = tracing.startReconcile("Cluster", cluster, "pending");
      atRest.decided({ previousState: "ready", state: "ready" });
      atRest.end();
      const drifted = tracing.startReconcile("Cluster", cluster, "pending");
      drifted.decided({ previousState: "ready", state: "ready" });
      await drifted.event("write Cluster", {}, async () => {});
      drifted.end();
    });
    expect(spans.map((span) => span.name)).toEqual(["reconcile Cluster"]);
    expect(spans[0]?.events.map((event) => event.name)).toEqual(["step ready → ready", "write Cluster"]);
    expect(spans[0]?.attributes["engine.state"]).toBe("ready");
  });

  it("makes no span of a state entered and left in one reconcile: the reconcile's step events tell it", async () => {
    const spans = await traced(async (tracing) => {
      const cluster = object("cl-uid", "c");
      const first = tracing.startReconcile("Cluster", cluster, "pending");
      first.decided({ previousState: "pending", state: "provisioning" });
      first.decided({ previousState: "provisioning", state: "waiting" });
      first.stepped(
        [
          { previousState: "pending", state: "provisioning" },
          { previousState: "provisioning", state: "waiting" },
        ],
        T0 + 1_000,
      );
      first.end();
      const second = tracing.startReconcile("Cluster", cluster, "pending");
      second.decided({ previousState: "waiting", state: "ready" });
      second.stepped([{ previousState: "waiting", state: "ready" }], T0 + 5_000);
      second.end();
    });
    expect(spans.map((span) => span.name).sort()).toEqual([
      "Cluster demo/c",
      "Cluster waiting",
      "reconcile Cluster",
      "reconcile Cluster",
    ]);
    const waiting = spans.find((span) => span.name === "Cluster waiting");
    expect([waiting?.startTime, waiting?.endTime]).toEqual([
      [T0 / 1000 + 1, 0],
      [T0 / 1000 + 5, 0],
    ]);
    expect(
      spans.find((span) => span.name === "reconcile Cluster")?.events.map((event) => event.name),
    ).toEqual(["step pending → provisioning", "step provisioning → waiting"]);
  });

  it("marks a failed command and its reconcile as errors, with the message", async () => {
    const spans = await traced(async (tracing) => {
      const reconcile = tracing.startReconcile("Cluster", object("cl-uid", "c"), "pending");
      const failure = new Error("backend refused: quota exceeded");
      await expect(
        reconcile.span("command create", {}, async () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      reconcile.end(failure);
    });
    for (const name of ["command create", "reconcile Cluster"]) {
      expect(spans.find((span) => span.name === name)?.status).toEqual({
        code: 2,
        message: "backend refused: quota exceeded",
      });
    }
  });

  it("records no span for a trace the sampler leaves out, and keeps a continued trace's decision", async () => {
    const spans = await traced(
      async (tracing) => {
        const alone = tracing.startReconcile("ClusterRequest", object("r1", "alone"), "pending");
        alone.decided({ previousState: "pending", state: "scheduling" });
        await alone.event("write ClusterRequest", {}, async () => {});
        alone.stepped([{ previousState: "pending", state: "scheduling" }], T0 + 1_000);
        alone.end();
        await reconcileContinued(tracing);
      },
      { ...SETTINGS, ratio: 0 },
    );
    expect(spans.map((span) => [span.name, span.spanContext().traceId])).toEqual([
      ["reconcile ClusterRequest", "0af7651916cd43dd8448eb211c80319c"],
    ]);
  });

  it("names a continued span as remote and a reconcile's as local, and times a reconcile's events within it", async () => {
    const spans = await traced(async (tracing) => {
      const reconcile = tracing.startReconcile("Cluster", object("cl-uid", "c"), "pending");
      reconcile.decided({ previousState: "pending", state: "pending" });
      await reconcile.event("write Cluster", {}, async () => {});
      await reconcile.span("command create", { "engine.command": "create" }, async () => {});
      reconcile.decided({ previousState: "pending", state: "provisioning" });
      reconcile.end();
    });
    const reconcile = spans.find((span) => span.name === "reconcile Cluster") as ReadableSpan;
    const command = spans.find((span) => span.name === "command create") as ReadableSpan;
    expect(reconcile.parentSpanContext).toMatchObject({
      spanId: objectSpanIds("cl-uid", undefined).spanId,
      isRemote: true,
    });
    expect(command.parentSpanContext?.spanId).toBe(reconcile.spanContext().spanId);
    expect(command.parentSpanContext?.isRemote).toBeFalsy();
    expect(command.attributes).toEqual({ "engine.command": "create" });
    const nanos = ([seconds, fraction]: readonly [number, number]) =>
      BigInt(seconds) * 1_000_000_000n + BigInt(fraction);
    const [start, end] = [nanos(reconcile.startTime), nanos(reconcile.endTime)];
    expect(reconcile.events).toHaveLength(3);
    for (const event of reconcile.events) {
      expect(nanos(event.time) >= start && nanos(event.time) <= end, event.name).toBe(true);
    }
    expect(nanos(command.startTime) >= start && nanos(command.endTime) <= end).toBe(true);
  });

  it("without a parent-based sampler lets the ratio decide a continued trace too, and records no state of a trace left out", async () => {
    expect(await traced(reconcileContinued, { ...SETTINGS, ratio: 0, parentBased: false })).toEqual([]);

    const alone = object("r1", "alone");
    const leftOut = await traced(
      async (tracing) => {
        for (const [step, at] of [
          [{ previousState: "pending", state: "scheduling" }, T0 + 1_000],
          [{ previousState: "scheduling", state: "granted" }, T0 + 2_000],
        ] as const) {
          const reconcile = tracing.startReconcile("ClusterRequest", alone, "pending");
          reconcile.decided(step);
          reconcile.stepped([step], at);
          reconcile.end();
        }
      },
      { ...SETTINGS, ratio: 0 },
    );
    expect(leftOut).toEqual([]);
  });
});
