/**
 * The engine as `run` starts it, from settings rather than flags: `openmcp-engine run` starts it this way,
 * and so does a program that embeds the engine (`run` of the package's main entry, the same function).
 */
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { getHeapStatistics } from "node:v8";
import type { KubeConfig } from "@kubernetes/client-node";
import type { BackendFactory, ClusterBackend, SecretReader } from "../api/backend-contract.ts";
import type { Logger, LogLevel } from "../api/logger.ts";
import { BUILT_IN_BACKENDS, createBackend } from "../providers/registry.ts";
import type { BackendSource } from "../runtime/backends.ts";
import { systemClock } from "../runtime/clock.ts";
import { Engine, type EngineOptions } from "../runtime/engine.ts";
import { EventRecorder } from "../runtime/event-recorder.ts";
import { DEFAULT_ACCESS_TIMING } from "../runtime/kinds/access-request/kind.ts";
import { detectCapi } from "../runtime/kinds/capi-owned/detection.ts";
import {
  configMapSource,
  fileConfigSource,
  type SchedulerConfigSource,
} from "../runtime/kinds/cluster-request/scheduler-config-source.ts";
import { DEFAULT_LEADER_ELECTION, type LeaderElectionTiming } from "../runtime/leader-election.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import type { MachineObserver } from "../runtime/machine-observer.ts";
import type { EngineMetrics } from "../runtime/metrics.ts";
import { startProbeServers } from "../runtime/probe-server.ts";
import { apiSecretReader } from "../runtime/secret-reader.ts";
import { tracingFromEnv } from "../runtime/tracing/otel-sdk.ts";
import { DNS_LABEL, LABEL_VALUE } from "./flags.ts";
import { ENGINE_V8_FLAGS, setLateV8Flags, v8FlagsStillMissing } from "./v8-flags.ts";

/** Every setting of the engine, resolved (the flags of `run` parse into this). */
export interface EngineSettings {
  readonly providerName: string;
  readonly environment: string;
  readonly kubeconfig: string | undefined;
  /** `--namespace`: the one namespace watched; undefined: all. */
  readonly namespace: string | undefined;
  /** `--watch-filter`: the value of `cluster.x-k8s.io/watch-filter` Cluster API objects must carry; undefined: any. */
  readonly watchFilter: string | undefined;
  /**
   * A built-in name, a module path or a package (as `--backend`), or a factory given by an embedding program;
   * undefined: each ProviderConfig chooses among the built-in backends (see `backendFromSettings`).
   */
  readonly backend: string | BackendFactory | undefined;
  readonly concurrency: number;
  /** `--kube-api-qps`/`--kube-api-burst`; undefined: no client-side limit. */
  readonly apiRateLimit: { readonly qps: number; readonly burst: number } | undefined;
  readonly stateDirectory: string;
  readonly logLevel: LogLevel;
  readonly backendOptions: Readonly<Record<string, string>>;
  /** Sharded mode: the namespace of the membership Leases, and their timings. */
  readonly sharding: { readonly namespace: string; readonly timing: LeaderElectionTiming } | undefined;
  readonly leaderElection:
    | { readonly namespace: string; readonly name: string; readonly timing: LeaderElectionTiming }
    | undefined;
  /** `:8080`, `127.0.0.1:8080`, or `0` for none. */
  readonly metricsAddress: string;
  readonly healthAddress: string;
  readonly prepareAccessRequests: boolean;
  readonly tokenValidityMs: number;
  readonly schedule: boolean;
  /** True: serve Cluster API (refuse to start without it); false: never; undefined: when it is installed. */
  readonly capi: boolean | undefined;
  /** Keep ClusterPools' idle clusters and serve new Clusters from them. */
  readonly warmPools: boolean;
  /** Where the scheduler configuration comes from; undefined: none given. */
  readonly schedulerConfig:
    | { readonly file: string }
    | { readonly configMap: { readonly namespace: string; readonly name: string } }
    | undefined;
}

/** The defaults the `run` command and {@link startEngine} share. */
export const DEFAULT_SETTINGS = {
  environment: "default",
  concurrency: 4,
  stateDirectory: ".state/engine",
  tokenValidityMs: 86_400_000,
} as const;

/** How a program embedding the engine starts it: `providerName` and what differs from `run`'s defaults. */
export interface RunOptions {
  /** This provider's name, a DNS label: ClusterProfiles naming it are this engine's. */
  readonly providerName: string;
  /** First part of generated profile names (default `default`). */
  readonly environment?: string;
  /** The API server: a kubeconfig file or a loaded KubeConfig (default: $KUBECONFIG, in-cluster, ~/.kube/config). */
  readonly kubeconfig?: string | KubeConfig;
  /**
   * Watch one namespace (as `--namespace`): namespaced kinds are listed, watched and reconciled only there;
   * cluster-scoped kinds stay cluster-wide. Default: all namespaces.
   */
  readonly namespace?: string;
  /** As `--watch-filter`: only Cluster API objects labelled `cluster.x-k8s.io/watch-filter=<value>`. */
  readonly watchFilter?: string;
  /** A built-in name, a module path, a package name (as `--backend`), or a factory (default: chosen by each ProviderConfig among the built-ins). */
  readonly backend?: string | BackendFactory;
  /** As `--backend-option key=value`. */
  readonly backendOptions?: Readonly<Record<string, string>>;
  /** Where backends keep state across restarts (default `.state/engine`). */
  readonly stateDirectory?: string;
  /** Objects of each kind reconciled at once, 1–64 (default 4). */
  readonly concurrency?: number;
  readonly apiRateLimit?: { readonly qps: number; readonly burst: number };
  /** The engine's log (default: JSON lines on stderr at `logLevel`). */
  readonly log?: Logger;
  readonly logLevel?: LogLevel;
  /** Reconcile only while holding this Lease (name default `<providerName>.engine.openmcp.cloud`). */
  readonly leaderElection?: {
    readonly namespace: string;
    readonly name?: string;
    readonly timing?: LeaderElectionTiming;
  };
  /** Instead of leader election: every replica works on its share (see the README). */
  readonly sharding?: { readonly namespace: string; readonly timing?: LeaderElectionTiming };
  /** Serve /metrics and /healthz, /readyz (default: neither; `0` is off). */
  readonly metricsAddress?: string;
  readonly healthAddress?: string;
  /** Also report this process's heap, RSS, GC and event loop in the metrics (default false). */
  readonly processMetrics?: boolean;
  readonly prepareAccessRequests?: boolean;
  /** Validity of issued tokens, at least 10 minutes (default 24 h). */
  readonly tokenValidityMs?: number;
  readonly schedule?: boolean;
  readonly schedulerConfig?: EngineSettings["schedulerConfig"];
  readonly capi?: boolean;
  /** Keep ClusterPools' idle clusters and serve new Clusters from them (default false). */
  readonly warmPools?: boolean;
  /** Told about every committed machine step (the Stately inspector, the live view). */
  readonly observers?: readonly MachineObserver[];
  /** Called with the engine once built, before it watches anything (e.g. to watch its caches). */
  readonly beforeStart?: (engine: Engine) => void;
  /** Stops the engine when aborted (also while it is starting). */
  readonly signal?: AbortSignal;
  /**
   * Called when leadership or the membership Lease is lost after it was won; the engine has stopped
   * reconciling. Default: log and stop the engine. `run` exits the process so that a fresh start rejoins.
   */
  readonly onLost?: () => void;
}

/** The running engine of {@link startEngine}. */
export interface RunningEngine {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  /** Stops watching, finishes the reconciles in flight, releases Leases and closes the backend. Idempotent. */
  stop(): Promise<void>;
}

/** `options` with the defaults filled in; throws a message naming the option that is wrong. */
export function settingsFromOptions(options: RunOptions): EngineSettings {
  for (const [name, value] of [
    ["providerName", options.providerName],
    ["environment", options.environment ?? DEFAULT_SETTINGS.environment],
  ] as const) {
    if (typeof value !== "string" || !DNS_LABEL.test(value))
      throw new TypeError(
        `${name} "${value}" must be a DNS label: lowercase letters, digits and '-', at most 63 characters`,
      );
  }
  if (options.namespace && !DNS_LABEL.test(options.namespace))
    throw new TypeError(`namespace "${options.namespace}" is not a namespace name (a DNS label); empty: all`);
  if (options.watchFilter && !LABEL_VALUE.test(options.watchFilter))
    throw new TypeError(`watchFilter "${options.watchFilter}" is not a label value`);
  const concurrency = options.concurrency ?? DEFAULT_SETTINGS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    throw new RangeError(`concurrency ${concurrency} must be a whole number from 1 to 64`);
  if (options.leaderElection && options.sharding)
    throw new TypeError("leaderElection and sharding exclude each other: sharded replicas all work");
  const tokenValidityMs = options.tokenValidityMs ?? DEFAULT_SETTINGS.tokenValidityMs;
  if (tokenValidityMs < 600_000)
    throw new RangeError("tokenValidityMs must be at least 600000 (10 minutes, the API server's minimum)");
  const election = options.leaderElection;
  return {
    providerName: options.providerName,
    environment: options.environment ?? DEFAULT_SETTINGS.environment,
    kubeconfig: typeof options.kubeconfig === "string" ? options.kubeconfig : undefined,
    namespace: options.namespace || undefined,
    watchFilter: options.watchFilter || undefined,
    backend: options.backend,
    concurrency,
    apiRateLimit: options.apiRateLimit,
    stateDirectory: resolve(options.stateDirectory ?? DEFAULT_SETTINGS.stateDirectory),
    logLevel: options.logLevel ?? "info",
    backendOptions: options.backendOptions ?? {},
    sharding: options.sharding
      ? { namespace: options.sharding.namespace, timing: options.sharding.timing ?? DEFAULT_LEADER_ELECTION }
      : undefined,
    leaderElection: election
      ? {
          namespace: election.namespace,
          name: election.name ?? `${options.providerName}.engine.openmcp.cloud`,
          timing: election.timing ?? DEFAULT_LEADER_ELECTION,
        }
      : undefined,
    metricsAddress: options.metricsAddress ?? "0",
    healthAddress: options.healthAddress ?? "0",
    prepareAccessRequests: options.prepareAccessRequests ?? true,
    tokenValidityMs,
    schedule: options.schedule ?? true,
    capi: options.capi,
    warmPools: options.warmPools ?? false,
    schedulerConfig: options.schedulerConfig,
  };
}

/**
 * Starts the engine: loads the backend, serves the probes asked for, watches and waits for complete
 * caches, then reconciles (at once, or once this replica leads or holds its membership). Resolves once
 * started; keeps the process alive until stopped.
 */
export async function startEngine(
  options: RunOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningEngine> {
  // An embedding program started without the engine's flags: the one V8 still honours is set here.
  const late = setLateV8Flags(process.execArgv, env.NODE_OPTIONS);
  const settings = settingsFromOptions(options);
  const kubeConfig =
    typeof options.kubeconfig === "object"
      ? options.kubeconfig
      : loadKubeConfig(options.kubeconfig, env).kubeConfig;
  const log = options.log ?? createLogger({ level: settings.logLevel });
  if (late.length > 0) log.info(`set ${late.join(" ")} in this process (V8 honours it after start)`);
  let stopping: Promise<void> | undefined;
  const engine = await engineFromSettings(settings, kubeConfig, log, env, {
    ...(options.observers ? { observers: options.observers } : {}),
    onLostLeadership:
      options.onLost ??
      (() => {
        log.error("leadership or membership lost; stopping the engine");
        void stop();
      }),
  });
  if (options.processMetrics) engine.metrics.collectProcessMetrics();
  options.beforeStart?.(engine);
  const probes = await startProbeServers({
    metricsAddress: settings.metricsAddress,
    healthAddress: settings.healthAddress,
    metrics: engine.metrics,
    ready: () => engine.hasSynced(),
    details: () => engine.readinessDetails(),
    log,
  });
  // The engine's timers are unreferenced; this keeps the process up while it waits for the API server.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(keepAlive);
      await engine.stop();
      await probes.close();
    })();
    return stopping;
  };
  if (options.signal?.aborted) await stop();
  else options.signal?.addEventListener("abort", () => void stop(), { once: true });
  if (!stopping) {
    try {
      await engine.start();
    } catch (error) {
      await stop();
      throw error;
    }
  }
  return { engine, metrics: engine.metrics, stop };
}

/** The state folder name of a backend: its spec, or `embedded` for a factory given in code. */
const backendFolder = (backend: string | BackendFactory) =>
  typeof backend === "string" ? backend.replace(/[^a-zA-Z0-9._-]+/g, "_") : "embedded";

/**
 * The backends the settings give: the one `--backend` names, made now (a failure stops the start), or with
 * no `--backend` — as openMCP deploys a provider — a catalog of the built-in backends, each made when a
 * ProviderConfig first names it (a failure shows on that ProviderConfig). Each keeps its state in a folder of
 * its own under the state folder, the same in both modes.
 */
export async function backendFromSettings(
  settings: Pick<EngineSettings, "backend" | "backendOptions" | "stateDirectory">,
  kubeConfig: KubeConfig,
  log: Logger,
  readSecret: SecretReader = apiSecretReader(kubeConfig),
): Promise<BackendSource> {
  if (settings.backend === undefined)
    return {
      names: BUILT_IN_BACKENDS,
      load: (name) => makeBackend({ ...settings, backend: name }, readSecret, log),
    };
  return makeBackend({ ...settings, backend: settings.backend }, readSecret, log);
}

/** Makes one backend; it keeps its state in a folder of its own under the state folder. */
async function makeBackend(
  settings: Pick<EngineSettings, "backendOptions" | "stateDirectory"> & {
    readonly backend: string | BackendFactory;
  },
  readSecret: SecretReader,
  log: Logger,
): Promise<ClusterBackend> {
  const stateDirectory = join(settings.stateDirectory, backendFolder(settings.backend));
  mkdirSync(stateDirectory, { recursive: true });
  const context = {
    stateDirectory,
    options: settings.backendOptions,
    log: log.with({ backend: typeof settings.backend === "string" ? settings.backend : "embedded" }),
    clock: systemClock,
    readSecret,
  };
  return typeof settings.backend === "string"
    ? createBackend(settings.backend, context)
    : settings.backend(context);
}

/** The scheduler configuration's source the settings name, saying in the log what scheduling will do. */
function schedulerConfigFromSettings(
  settings: EngineSettings,
  kubeConfig: KubeConfig,
  log: Logger,
  env: NodeJS.ProcessEnv,
): SchedulerConfigSource | undefined {
  if (!settings.schedule) {
    log.info("scheduler off (--no-schedule): ClusterRequests are left to another scheduler");
    return undefined;
  }
  const where = settings.schedulerConfig;
  // None: the ClusterRequest kind says once that it leaves every request to another scheduler.
  if (where === undefined) return undefined;
  const schedulerLog = log.with({ component: "scheduler-config" });
  if ("configMap" in where) return configMapSource({ kubeConfig, ...where.configMap, log: schedulerLog });
  // A file has no object of its own to carry Events; in a cluster they go to the engine's Pod.
  const pod =
    env.POD_NAME && env.POD_NAMESPACE ? { name: env.POD_NAME, namespace: env.POD_NAMESPACE } : undefined;
  const events = pod ? new EventRecorder(kubeConfig, schedulerLog) : undefined;
  return fileConfigSource({
    path: where.file,
    log: schedulerLog,
    ...(pod && events
      ? {
          tell: (event) =>
            void events.record({ apiVersion: "v1", kind: "Pod", metadata: pod }, event, new Date()),
        }
      : {}),
  });
}

/** Whether to serve Cluster API, saying so in the log; `--capi` without Cluster API installed is an error. */
async function capiSideFromSettings(
  wanted: boolean | undefined,
  kubeConfig: KubeConfig,
  log: Logger,
): Promise<boolean> {
  if (wanted === false) {
    log.info("Cluster API side off (--no-capi): EngineClusters are left alone");
    return false;
  }
  const presence = await detectCapi(kubeConfig);
  if (presence.installed) {
    log.info("Cluster API side on: serving EngineClusters as a v1beta2 infrastructure provider", {
      why: wanted ? "--capi" : "Cluster API is installed",
    });
    return true;
  }
  if (wanted) {
    throw new Error(
      `--capi: Cluster API is not usable here: ${presence.why}; install Cluster API first, or drop --capi`,
    );
  }
  log.info(
    `Cluster API side off: ${presence.why}; install Cluster API and restart (or pass --capi) to serve EngineClusters`,
  );
  return false;
}

/** Builds (does not start) the engine the settings describe. */
export async function engineFromSettings(
  settings: EngineSettings,
  kubeConfig: KubeConfig,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
  extra: Pick<EngineOptions, "observers" | "onLostLeadership"> = {},
): Promise<Engine> {
  // Traces only when the OTEL_* variables ask for them: otherwise not even the SDK is loaded.
  const tracing = await tracingFromEnv(env, log);
  const backend = await backendFromSettings(settings, kubeConfig, log);
  const missing = v8FlagsStillMissing(process.execArgv, env.NODE_OPTIONS);
  if (missing.length > 0) {
    // Embedded, or under a debugger: the host's heap sizes were fixed at its start; only the host can set them.
    log.info(
      `this process runs without the engine's V8 flags ${missing.join(" ")}: its memory follows V8's defaults (several times the README's figures); call execWithEngineMemorySettings() first in the program's entry script, or start node with them: node ${ENGINE_V8_FLAGS.join(" ")} <script> (NODE_OPTIONS may carry the heap sizes, not --optimize-for-size)`,
      { heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20) },
    );
  }
  const election = settings.leaderElection;
  // Unique per process: a restarted pod of the same name is a new member, never mistaken for the old one.
  const identity = `${env.POD_NAME ?? hostname()}_${randomUUID().slice(0, 8)}`;
  const schedulerConfig = schedulerConfigFromSettings(settings, kubeConfig, log, env);
  const capi = await capiSideFromSettings(settings.capi, kubeConfig, log);
  return new Engine({
    kubeConfig,
    providerName: settings.providerName,
    environment: settings.environment,
    ...(settings.namespace ? { namespace: settings.namespace } : {}),
    ...(settings.watchFilter ? { watchFilter: settings.watchFilter } : {}),
    backend,
    concurrency: settings.concurrency,
    ...(settings.apiRateLimit ? { apiRateLimit: settings.apiRateLimit } : {}),
    log,
    ...(extra.observers?.length ? { observers: extra.observers } : {}),
    prepareAccessRequests: settings.prepareAccessRequests,
    schedule: settings.schedule,
    capi,
    ...(settings.warmPools ? { pools: true } : {}),
    ...(schedulerConfig ? { schedulerConfig } : {}),
    accessTiming: { ...DEFAULT_ACCESS_TIMING, tokenValidityMs: settings.tokenValidityMs },
    ...(election ? { leaderElection: { ...election, identity } } : {}),
    ...(settings.sharding ? { sharding: { ...settings.sharding, identity } } : {}),
    ...(extra.onLostLeadership ? { onLostLeadership: extra.onLostLeadership } : {}),
    ...(tracing ? { tracing } : {}),
  });
}
