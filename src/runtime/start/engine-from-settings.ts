/**
 * The engine as `run` starts it, from settings rather than flags: `openmcp-engine run` starts it this way,
 * and so does a program that embeds the engine (`run` of the package's main entry, the same function).
 */
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import type { KubeConfig } from "@kubernetes/client-node";
import type { BackendFactory, ClusterBackend, SecretReader } from "../../api/backend-contract.ts";
import type { Logger } from "../../api/logger.ts";
import { BUILT_IN_BACKENDS, createBackend } from "../../providers/registry.ts";
import { loadKubeConfig } from "../api-server/load-kubeconfig.ts";
import { apiSecretReader } from "../api-server/secret-reader.ts";
import type { BackendSource } from "../backends.ts";
import { systemClock } from "../clock.ts";
import { Engine, type EngineOptions } from "../engine.ts";
import { EventRecorder } from "../event-recorder.ts";
import { DEFAULT_ACCESS_TIMING } from "../kinds/access-request/kind.ts";
import { detectCapi } from "../kinds/capi-owned/detection.ts";
import {
  configMapSource,
  fileConfigSource,
  type SchedulerConfigSource,
} from "../kinds/cluster-request/scheduler-config-source.ts";
import { capiServed, type KindSettingsByName, mergeKindSettings } from "../kinds/registry.ts";
import { createLogger } from "../logger.ts";
import type { EngineMetrics } from "../metrics.ts";
import { startProbeServers } from "../probe-server.ts";
import { tracingFromEnv } from "../tracing/otel-sdk.ts";
import { type EngineSettings, type RunOptions, settingsFromOptions } from "./engine-settings.ts";
import { ENGINE_V8_FLAGS, setLateV8Flags, v8FlagsStillMissing } from "./v8-flags.ts";

/** The running engine of {@link startEngine}. */
export interface RunningEngine {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  /** Stops watching, finishes the reconciles in flight, releases Leases and closes the backend. Idempotent. */
  stop(): Promise<void>;
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
  const kindSettings = await kindSettingsFromSettings(settings, kubeConfig, log, env);
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
    kindSettings,
    ...(election ? { leaderElection: { ...election, identity } } : {}),
    ...(settings.sharding ? { sharding: { ...settings.sharding, identity } } : {}),
    ...(extra.onLostLeadership ? { onLostLeadership: extra.onLostLeadership } : {}),
    ...(tracing ? { tracing } : {}),
  });
}

/** The kinds' settings the engine settings give (also what `plan` needs to decide as that engine would). */
export async function kindSettingsFromSettings(
  settings: EngineSettings,
  kubeConfig: KubeConfig,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<KindSettingsByName> {
  const schedulerConfig = schedulerConfigFromSettings(settings, kubeConfig, log, env);
  const capi = await capiSideFromSettings(settings.capi, kubeConfig, log);
  return mergeKindSettings(
    {
      ...capiServed(capi),
      ...(settings.warmPools ? { Cluster: { pools: true } } : {}),
      // Snapshots hold keys: beside the backends' state, on the engine's own volume.
      ClusterSnapshot: { folder: join(settings.stateDirectory, "snapshots") },
      ClusterRequest: { enabled: settings.schedule, ...(schedulerConfig ? { schedulerConfig } : {}) },
      AccessRequest: {
        prepare: settings.prepareAccessRequests,
        timing: { ...DEFAULT_ACCESS_TIMING, tokenValidityMs: settings.tokenValidityMs },
      },
    },
    // `--resync`: each named kind's resync period, over its timing (defaults or the above).
    Object.fromEntries(
      Object.entries(settings.resyncMs).map(([kind, resyncMs]) => [kind, { timing: { resyncMs } }]),
    ),
  );
}
