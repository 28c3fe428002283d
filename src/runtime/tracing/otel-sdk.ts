/**
 * Starts OpenTelemetry's SDK for the engine's spans when the `OTEL_*` variables ask for it (see otel-settings.ts):
 * a tracer provider of its own (never the global one), a batching processor and the OTLP exporter the protocol
 * names, which reads the endpoint, headers, TLS and timeout variables itself. Loaded only when tracing is on.
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Logger } from "../../api/logger.ts";
import { EngineTracing, type IdChooser } from "./engine-tracing.ts";
import { type TracingSettings, tracingSettings } from "./otel-settings.ts";
import type { SpanIds } from "./trace-ids.ts";

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
  let chosen: SpanIds | undefined;
  const ids: IdChooser & { generateTraceId(): string; generateSpanId(): string } = {
    choose: (next) => {
      chosen = next;
    },
    generateTraceId: () => chosen?.traceId ?? random.generateTraceId(),
    generateSpanId: () => chosen?.spanId ?? random.generateSpanId(),
  };
  const root = new sdk.TraceIdRatioBasedSampler(settings.ratio);
  const sampler = settings.parentBased ? new sdk.ParentBasedSampler({ root }) : root;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the engine's default name.
  const resource = resources
    .resourceFromAttributes({ "service.name": settings.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.TracerProvider({
    idGenerator: ids,
    sampler,
    resource,
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        ...settings.batch,
        exporter: exporter ?? new exporters.OTLPTraceExporter(),
      }),
    ],
  });
  const sampled = (traceId: string) =>
    root.shouldSample(undefined as never, traceId).decision === sdk.SamplingDecision.RECORD_AND_SAMPLED;
  log.info("exporting traces", {
    protocol: settings.protocol,
    service: settings.serviceName,
    ratio: settings.ratio,
  });
  return new EngineTracing(provider.getTracer("openmcp-engine"), ids, {
    sampled,
    shutdown: () => provider.shutdown(),
  });
}
