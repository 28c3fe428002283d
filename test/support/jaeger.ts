/**
 * Jaeger (all-in-one, in-memory storage) as the real OTLP receiver the engine's traces go to in tests: its
 * OTLP gRPC receiver and its query API on free ports, and the traces read back through the query API.
 * Built once per machine by hack/jaeger/build.sh (the heavy project's `jaeger` stage).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBuiltBinary, hackScript } from "../../src/util/executables.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import { eventually } from "./eventually.ts";

/** The repository's build script; it honours OPENMCP_JAEGER_ASSETS and the per-machine cache. */
export const JAEGER_BUILD_SCRIPT = hackScript("jaeger", "build.sh");

/** The jaeger binary, building it the first time on a machine (about 3 minutes here, downloads included). */
export const findJaeger = (): string => findBuiltBinary(JAEGER_BUILD_SCRIPT, "jaeger").binary;

/** One span as Jaeger's query API returns it (times in µs since the epoch). */
export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: readonly { readonly refType: string; readonly spanID: string }[];
  readonly startTime: number;
  readonly duration: number;
  readonly tags: readonly { readonly key: string; readonly value: unknown }[];
}

export interface Jaeger {
  readonly pid: number;
  /** Where an OTLP gRPC exporter sends (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly otlpGrpc: string;
  /** The spans of one trace, as Jaeger stored them; empty while it has none. */
  trace(traceId: string): Promise<JaegerSpan[]>;
  /** Spans its OTLP receiver has taken so far (its own metrics). */
  acceptedSpans(): Promise<number>;
  stop(): Promise<void>;
}

export async function startJaeger(): Promise<Jaeger> {
  const binary = findJaeger();
  const [grpc, http, query, queryGrpc, metrics] = (await freePorts(5)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const folder = mkdtempSync(join(tmpdir(), "jaeger-"));
  const config = join(folder, "config.yaml");
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], exporters: [jaeger_storage_exporter]}
  telemetry:
    metrics:
      level: basic
      readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: ${metrics}}}}}]
extensions:
  jaeger_storage: {backends: {memory: {memory: {max_traces: 100000}}}}
  jaeger_query:
    storage: {traces: memory}
    http: {endpoint: "127.0.0.1:${query}"}
    grpc: {endpoint: "127.0.0.1:${queryGrpc}"}
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:${grpc}"}
      http: {endpoint: "127.0.0.1:${http}"}
exporters:
  jaeger_storage_exporter: {trace_storage: memory}
`,
  );
  const child: ChildProcess = spawn(binary, ["--config", config], { stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  const api = `http://127.0.0.1:${query}/api`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`jaeger exited (${child.exitCode}):\n${output}`);
      return (await fetch(`${api}/services`).catch(() => undefined))?.ok === true;
    },
    { what: "Jaeger's query API", timeoutMs: 30_000 },
  );
  return {
    pid: child.pid ?? 0,
    otlpGrpc: `http://127.0.0.1:${grpc}`,
    async trace(traceId) {
      const response = await fetch(`${api}/traces/${traceId}`);
      if (response.status === 404) return [];
      const body = (await response.json()) as { data?: { spans: JaegerSpan[] }[] };
      return body.data?.flatMap((trace) => trace.spans) ?? [];
    },
    async acceptedSpans() {
      const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      return text
        .split("\n")
        .filter((line) => line.startsWith("otelcol_receiver_accepted_spans"))
        .reduce((total, line) => total + Number(line.split(" ").at(-1)), 0);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The share of [from, to] (µs) that the spans' union covers. */
export function coverage(spans: readonly JaegerSpan[], from: number, to: number): number {
  const intervals = spans
    .map((span) => [Math.max(span.startTime, from), Math.min(span.startTime + span.duration, to)] as const)
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reached = from;
  for (const [start, end] of intervals) {
    if (end <= reached) continue;
    covered += end - Math.max(start, reached);
    reached = end;
  }
  return covered / (to - from);
}
