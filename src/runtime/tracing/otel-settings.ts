/**
 * Whether and how the engine exports traces, read from the standard OpenTelemetry variables only, as the
 * openMCP operator is configured: nothing is loaded or run unless an OTLP endpoint is set. Pure.
 */

/** What the tracing setup needs; the exporters read the rest of `OTEL_EXPORTER_OTLP_*` themselves. */
export interface TracingSettings {
  /** OTLP over gRPC (openMCP's operator's choice, the default here) or protobuf over HTTP. */
  readonly protocol: "grpc" | "http/protobuf";
  readonly serviceName: string;
  /** Share of new traces recorded (`OTEL_TRACES_SAMPLER` traceidratio / parentbased_traceidratio), 1 = all. */
  readonly ratio: number;
  /** Whether a trace continued from a `traceparent` follows its parent's sampling decision. */
  readonly parentBased: boolean;
  /** The batching span processor (`OTEL_BSP_*`). */
  readonly batch: BatchSettings;
}

/** How spans are batched before export. */
export interface BatchSettings {
  readonly scheduledDelayMillis: number;
  /** Spans held at most; more are dropped (the SDK warns). */
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly exportTimeoutMillis: number;
}

/**
 * The engine's batching: the SDK's delay and timeout, a queue and batches four and two times the SDK's, so a
 * burst of reconciles (1,000 Clusters to Ready: ~7,000 spans in 7 s) is neither dropped nor sent in many small
 * requests.
 */
const BATCH_DEFAULTS: BatchSettings = {
  scheduledDelayMillis: 5_000,
  maxQueueSize: 8_192,
  maxExportBatchSize: 1_024,
  exportTimeoutMillis: 30_000,
};

const SAMPLERS: Record<string, { ratio?: number; parentBased: boolean }> = {
  always_on: { ratio: 1, parentBased: false },
  always_off: { ratio: 0, parentBased: false },
  traceidratio: { parentBased: false },
  parentbased_always_on: { ratio: 1, parentBased: true },
  parentbased_always_off: { ratio: 0, parentBased: true },
  parentbased_traceidratio: { parentBased: true },
};

/**
 * The settings `env` asks for: undefined when tracing is off (`OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`,
 * or no `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); throws naming the variable when a
 * value is one the engine cannot honour.
 */
export function tracingSettings(
  env: Readonly<Record<string, string | undefined>>,
): TracingSettings | undefined {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw === "" ? undefined : raw;
  };
  if (value("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = value("OTEL_TRACES_EXPORTER")?.toLowerCase() ?? "otlp";
  if (exporter === "none") return undefined;
  if (exporter !== "otlp")
    throw new Error(
      `OTEL_TRACES_EXPORTER=${exporter}: the engine exports traces over OTLP only (otlp or none)`,
    );
  if (!value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") && !value("OTEL_EXPORTER_OTLP_ENDPOINT")) return undefined;

  const protocolVariable = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = value(protocolVariable) ?? "grpc";
  if (protocol !== "grpc" && protocol !== "http/protobuf")
    throw new Error(`${protocolVariable}=${protocol}: the engine speaks OTLP as grpc or http/protobuf`);

  const samplerName = value("OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on";
  const sampler = SAMPLERS[samplerName];
  if (!sampler)
    throw new Error(`OTEL_TRACES_SAMPLER=${samplerName}: one of ${Object.keys(SAMPLERS).join(", ")}`);
  let ratio = sampler.ratio;
  if (ratio === undefined) {
    const argument = value("OTEL_TRACES_SAMPLER_ARG") ?? "1";
    ratio = Number(argument);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
      throw new Error(`OTEL_TRACES_SAMPLER_ARG=${argument}: a ratio between 0 and 1`);
  }
  const count = (name: string, fallback: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`${name}=${raw}: a whole number above 0`);
    return parsed;
  };
  const maxQueueSize = count("OTEL_BSP_MAX_QUEUE_SIZE", BATCH_DEFAULTS.maxQueueSize);
  return {
    protocol,
    serviceName: value("OTEL_SERVICE_NAME") ?? "openmcp-engine",
    ratio,
    parentBased: sampler.parentBased,
    batch: {
      scheduledDelayMillis: count("OTEL_BSP_SCHEDULE_DELAY", BATCH_DEFAULTS.scheduledDelayMillis),
      maxQueueSize,
      // The SDK caps a batch at the queue's size.
      maxExportBatchSize: Math.min(
        maxQueueSize,
        count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", BATCH_DEFAULTS.maxExportBatchSize),
      ),
      exportTimeoutMillis: count("OTEL_BSP_EXPORT_TIMEOUT", BATCH_DEFAULTS.exportTimeoutMillis),
    },
  };
}
