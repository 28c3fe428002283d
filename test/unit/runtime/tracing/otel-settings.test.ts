/** Tracing is configured by the standard OTEL_* variables only: off unless an endpoint is set, and a value the engine cannot honour is named. */
import { describe, expect, it } from "vitest";
import { tracingSettings } from "../../../../src/runtime/tracing/otel-settings.ts";

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317" };

describe("tracingSettings", () => {
  it("is off without an OTLP endpoint, when the SDK is disabled, or with the exporter none", () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeUndefined();
    expect(tracingSettings({ ...ENDPOINT, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(tracingSettings({ ...ENDPOINT, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
  });

  it("exports over gRPC, every trace, as openmcp-engine by default; a traces-only endpoint is enough", () => {
    const defaults = {
      protocol: "grpc",
      serviceName: "openmcp-engine",
      ratio: 1,
      parentBased: true,
      batch: {
        scheduledDelayMillis: 5_000,
        maxQueueSize: 8_192,
        maxExportBatchSize: 1_024,
        exportTimeoutMillis: 30_000,
      },
    };
    expect(tracingSettings(ENDPOINT)).toEqual(defaults);
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toEqual(
      defaults,
    );
  });

  it("takes the protocol (the traces variable first), the service name and the sampler", () => {
    expect(
      tracingSettings({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "provider-kind",
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }),
    ).toMatchObject({
      protocol: "http/protobuf",
      serviceName: "provider-kind",
      ratio: 0.25,
      parentBased: false,
    });
    expect(
      tracingSettings({ ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: "100", OTEL_BSP_SCHEDULE_DELAY: "200" })?.batch,
    ).toEqual({
      scheduledDelayMillis: 200,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
      exportTimeoutMillis: 30_000,
    });
    expect(tracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toMatchObject({
      ratio: 0,
      parentBased: true,
    });
  });

  it("names the variable whose value it cannot honour", () => {
    expect(() => tracingSettings({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toThrow(
      "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the engine speaks OTLP as grpc or http/protobuf",
    );
    expect(() => tracingSettings({ ...ENDPOINT, OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(
      /^OTEL_TRACES_EXPORTER=zipkin: /,
    );
    expect(() => tracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(
      /^OTEL_TRACES_SAMPLER=sometimes: one of always_on, /,
    );
    expect(() =>
      tracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }),
    ).toThrow("OTEL_TRACES_SAMPLER_ARG=2: a ratio between 0 and 1");
    expect(() => tracingSettings({ ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: "lots" })).toThrow(
      "OTEL_BSP_MAX_QUEUE_SIZE=lots: a whole number above 0",
    );
  });
});
