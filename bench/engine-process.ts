/**
 * The engine as its own `run` process for the benchmarks: its /metrics read, its garbage collected on
 * demand (through the V8 inspector, as a heap snapshot tool would) so that retained heap can be told from
 * heap V8 merely keeps, and an early exit reported instead of waited on forever.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { RESOURCES } from "../src/api/constants.ts";
import { freePorts } from "../src/util/free-ports.ts";
import { clusterBody, pool } from "./bench-clusters.ts";
import { CLOCK_TICKS, procStat } from "./proc-stat.ts";

export interface EngineProcess {
  readonly child: ChildProcess;
  /** The /metrics text; throws if the process has exited. */
  metrics(): Promise<string>;
  /** A full garbage collection in the process; resolves when it is done. */
  collectGarbage(): Promise<void>;
  /**
   * Starts V8's sampling CPU profiler in the process (every `intervalMicros`); the returned function stops it
   * and resolves with the profile (the `.cpuprofile` format: nodes, samples).
   */
  startProfile(intervalMicros: number): Promise<() => Promise<CpuProfile>>;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
}

/** V8's CPU profile as the inspector's Profiler.stop returns it (what a `.cpuprofile` file holds). */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string };
    readonly children?: readonly number[];
  }[];
  readonly samples: readonly number[];
}

/** One sample of a Prometheus text exposition, by metric name and (optional) exact label text. */
export function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `));
  return line ? Number(line.split(" ").at(-1)) : undefined;
}

/** The sum of a counter's samples whose labels satisfy `match`. */
export function sum(text: string, name: string, match: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = line.slice(name.length + 1, line.lastIndexOf("}"));
    if (match(labels)) total += Number(line.split(" ").at(-1));
  }
  return total;
}

/** The image's V8 flags, as its Dockerfile sets them (`ENV NODE_OPTIONS="…"`); empty if it sets none. */
export function imageNodeOptions(): string {
  const dockerfile = readFileSync(join(import.meta.dirname, "..", "Dockerfile"), "utf8");
  return /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(dockerfile)?.[1] ?? "";
}

/** CPU seconds (user + system) the processes have used so far, from /proc. */
export function cpuSeconds(pids: readonly number[]): number {
  const { user, system } = cpuTimes(pids);
  return user + system;
}

/** User and system CPU seconds the processes have used so far, from /proc. */
export function cpuTimes(pids: readonly number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const stat = procStat(pid);
    if (!stat) throw new Error(`process ${pid} has gone: no CPU times to read`);
    user += stat.userTicks;
    system += stat.systemTicks;
  }
  return { user: user / CLOCK_TICKS, system: system / CLOCK_TICKS };
}

/** Starts `node <entry> run <args>` with `nodeOptions` (and `env`), and waits until its /metrics answers. */
export async function startEngineProcess(
  entry: string,
  args: readonly string[],
  nodeOptions: string,
  env: NodeJS.ProcessEnv = {},
): Promise<EngineProcess> {
  const [metricsPort, inspectorPort] = (await freePorts(2)) as [number, number];
  const child = spawn(
    process.execPath,
    [
      `--inspect=127.0.0.1:${inspectorPort}`,
      entry,
      "run",
      ...args,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      "--health-probe-bind-address=0",
    ],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env, NODE_OPTIONS: nodeOptions } },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  let exited: string | undefined;
  child.once("exit", (code, signal) => {
    exited = `the engine exited (${signal ?? code}):\n${stderr}`;
  });
  const metrics = async () => {
    if (exited) throw new Error(exited);
    try {
      return await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    } catch {
      if (exited) throw new Error(exited);
      return "";
    }
  };
  while (sample(await metrics(), "process_resident_memory_bytes") === undefined) await sleep(200);

  /** A session on the process's inspector: `call` sends one method and resolves with its result. */
  const inspector = async () => {
    const [target] = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as Array<{
      webSocketDebuggerUrl: string;
    }>;
    if (!target) throw new Error("the engine's inspector lists no target");
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    let next = 0;
    const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
    socket.onmessage = (message) => {
      const reply = JSON.parse(String(message.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      const waiter = reply.id === undefined ? undefined : waiting.get(reply.id);
      if (!waiter) return;
      waiting.delete(reply.id as number);
      if (reply.error) waiter.reject(new Error(reply.error.message));
      else waiter.resolve(reply.result);
    };
    const call = (method: string, params: object = {}) =>
      new Promise<unknown>((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      });
    return { call, close: () => socket.close() };
  };
  const collectGarbage = async () => {
    const session = await inspector();
    await session.call("HeapProfiler.collectGarbage");
    session.close();
  };
  const startProfile = async (intervalMicros: number) => {
    const session = await inspector();
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: intervalMicros });
    await session.call("Profiler.start");
    return async () => {
      const { profile } = (await session.call("Profiler.stop")) as { profile: CpuProfile };
      session.close();
      return profile;
    };
  };
  const stop = async () => {
    if (exited) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await gone;
  };
  return { child, metrics, collectGarbage, startProfile, stop };
}

/**
 * Creates N Clusters `c-<i>` of `profile` in `namespace` (`concurrency` at once) and waits until the engine's
 * metrics count them all Ready; returns its peak RSS meanwhile.
 */
export async function createUntilReady(
  engine: EngineProcess,
  custom: CustomObjectsApi,
  props: { namespace: string; profile: string; count: number; concurrency: number },
): Promise<{ peakRss: number }> {
  const creating = pool(props.count, props.concurrency, async (i) => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: props.namespace,
      body: clusterBody(`c-${i}`, props.profile),
    });
  });
  let peakRss = 0;
  for (;;) {
    const text = await engine.metrics();
    peakRss = Math.max(peakRss, sample(text, "process_resident_memory_bytes") ?? 0);
    if ((sample(text, "openmcp_engine_objects", 'kind="Cluster",phase="Ready"') ?? 0) >= props.count) break;
    await sleep(250);
  }
  await creating;
  return { peakRss };
}
