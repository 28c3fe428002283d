/**
 * Starts OpenTelemetry's SDK for the engine's spans when the `OTEL_*` variables ask for it (see otel-settings.ts):
 * its batching span processor and the OTLP exporter the protocol names, which reads the endpoint, headers, TLS
 * and timeout variables itself, its resource, ratio sampler and random ids. The engine makes its spans finished
 * and hands them to the processor (engine-tracing.ts): no tracer provider, never the global one. Loaded only
 * when tracing is on.
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Logger } from "../../api/logger.ts";
import { EngineTracing } from "./engine-tracing.ts";
import { type TracingSettings, tracingSettings } from "./otel-settings.ts";

/** The engine's tracing as `env` asks for it (see otel-settings.ts); undefined when it asks for none. */
export async function tracingFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<EngineTracing | undefined> {
  const settings = tracingSettings(env);
  return settings ? startTracing(settings, log) : undefined;
}

/** The SDK with `settings`; `exporter` replaces the OTLP one (tests hold the spans in memory). */
export async function startTracing(
  settings: TracingSettings,
  log: Logger,
  exporter?: SpanExporter,
): Promise<EngineTracing> {
  const [sdk, resources, core, exporters] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/core"),
    settings.protocol === "grpc"
      ? import("@opentelemetry/exporter-trace-otlp-grpc")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  // A failed export is told in the log (the collector's Status or the network error), never with headers.
  core.setGlobalErrorHandler((error) => log.warn("exporting traces failed", { error: String(error) }));
  const random = new sdk.RandomIdGenerator();
  const ratio = new sdk.TraceIdRatioBasedSampler(settings.ratio);
  const sampled = (traceId: string) =>
    ratio.shouldSample(undefined as never, traceId).decision === sdk.SamplingDecision.RECORD_AND_SAMPLED;
  // A parent-based sampler follows the span an object continues (always sampled: its traceparent says so, or
  // it is another object's own span); a trace of the engine's own, and every trace without it, the ratio decides.
  const recorded = settings.parentBased
    ? (traceId: string, continued: boolean) => continued || sampled(traceId)
    : (traceId: string) => sampled(traceId);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the engine's default name.
  const resource = resources
    .resourceFromAttributes({ "service.name": settings.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = new sdk.BatchSpanProcessor({
    ...settings.batch,
    exporter: exporter ?? new exporters.OTLPTraceExporter(),
  });
  log.info("exporting traces", {
    protocol: settings.protocol,
    service: settings.serviceName,
    ratio: settings.ratio,
  });
  return new EngineTracing({
    sink: processor,
    resource,
    newSpanId: () => random.generateSpanId(),
    recorded,
    shutdown: () => processor.shutdown(),
  });
}
