/** `openmcp-engine run`: the controller, until SIGTERM or Ctrl-C. */
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ClusterBackend } from "../api/backend-contract.ts";
import { parseDuration } from "../api/duration.ts";
import { BUILT_IN_BACKENDS, createBackend } from "../providers/registry.ts";
import { detectCapi } from "../runtime/capi-detection.ts";
import { systemClock } from "../runtime/clock.ts";
import { Engine, type EngineOptions } from "../runtime/engine.ts";
import { EventRecorder } from "../runtime/event-recorder.ts";
import { DEFAULT_ACCESS_TIMING } from "../runtime/kinds/access-request.ts";
import { DEFAULT_LEADER_ELECTION, type LeaderElectionTiming } from "../runtime/leader-election.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from "../runtime/logger.ts";
import { startProbeServers } from "../runtime/probe-server.ts";
import {
  configMapSource,
  fileConfigSource,
  type SchedulerConfigSource,
} from "../runtime/scheduler-config-source.ts";
import { apiSecretReader } from "../runtime/secret-reader.ts";
import { type EngineFlagValues, parseDnsLabel, parseInteger } from "./flags.ts";
import { UsageError } from "./usage-error.ts";
import { startViews, viewFlagOptions, viewFlags, viewFlagsUsage } from "./views.ts";

export const runUsage = `Usage: openmcp-engine run --provider-name <name> [flags]

Runs the controller: ProviderConfigs become ClusterProfiles, Clusters whose profile is ours are built by
the backend. Stops gracefully on SIGTERM or Ctrl-C (a second signal exits at once).

Flags:
  --provider-name <name>          this provider's name; profiles naming it are ours (required)
  --environment <name>            first part of generated profile names (default: default)
  --kubeconfig <path>             API server access (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)
  --backend <name|path|package>   a built-in (${BUILT_IN_BACKENDS.join(", ")}), a module file or a package
                                  exporting createBackend (default: simulated)
  --backend-option <key=value>    a setting for the backend, repeatable (simulated: delay, provisionDelay,
                                  updateDelay, deleteDelay, failureRate)
  --concurrency <n>               Clusters reconciled at once, 1-64 (default: 4)
  --kube-api-qps <n>              client-side limit of requests a second to the API server; 0: none, the
                                  server's API Priority and Fairness decides (default: 0, as controller-runtime)
  --kube-api-burst <n>            requests above that rate allowed in a burst (default: 2 × qps)
  --state-dir <path>              where backends keep state across restarts (default: .state/engine)
  --log-level <level>             ${LOG_LEVELS.join(", ")} (default: info)
  --verbosity <DEBUG|INFO|ERROR>  the same, as the openMCP operator passes it (any case)
  --leader-elect / --no-leader-elect
                                  reconcile only while holding a Lease (default: on when $POD_NAMESPACE is set)
  --sharding                      every replica works, each on its share of the objects: replicas hold a
                                  membership Lease each and split the objects by consistent hashing
                                  (instead of leader election; see the README)
  --leader-election-namespace <ns>  namespace of the Lease(s) (default: $POD_NAMESPACE, else default)
  --leader-election-id <name>     name of the Lease (default: <provider-name>.engine.openmcp.cloud)
  --lease-duration <d>, --renew-deadline <d>, --retry-period <d>
                                  leader election and membership timings (default: 15s, 10s, 2s)
  --prepare-access-requests / --no-prepare-access-requests
                                  label AccessRequests with their provider and profile, expire them by ttl
                                  (default: on; turn off beside the openMCP operator, which does it)
  --access-token-validity <d>     validity of issued tokens, at least 10m (default: 24h); renewed at 80 %
  --schedule / --no-schedule      answer ClusterRequests with Clusters (default: on; turn off beside the
                                  openMCP operator, whose scheduler serves them)
  --scheduler-config <path>       the scheduler configuration, in the openMCP operator's format; reloaded on change
  --scheduler-config-map <ns/name>  the same from a ConfigMap (key config.yaml), watched
  --capi / --no-capi              serve Cluster API as an infrastructure provider (EngineClusters); default:
                                  on when Cluster API's CRDs are installed, off otherwise (said in the log);
                                  --capi refuses to start without them
  --metrics-bind-address <addr>   /metrics, e.g. :8080 or 127.0.0.1:8080; 0 turns it off (default: :8080)
  --health-probe-bind-address <addr>  /healthz and /readyz (default: :8081)
${viewFlagsUsage}
  -h, --help                      show this help

Environment: POD_NAME (Lease holder identity), POD_NAMESPACE (Lease namespace), as the openMCP operator sets them.`;

/** Parsed flags of `run` (also used by `up` and `init`). */
export interface RunFlags {
  readonly providerName: string;
  readonly environment: string;
  readonly kubeconfig: string | undefined;
  readonly backend: string;
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
  readonly metricsAddress: string;
  readonly healthAddress: string;
  readonly prepareAccessRequests: boolean;
  readonly tokenValidityMs: number;
  readonly schedule: boolean;
  /** `--capi` (true), `--no-capi` (false), neither: on when Cluster API is installed. */
  readonly capi: boolean | undefined;
  /** Where the scheduler configuration comes from; undefined: none given. */
  readonly schedulerConfig:
    | { readonly file: string }
    | { readonly configMap: { readonly namespace: string; readonly name: string } }
    | undefined;
}

/** The flag definitions of the engine, shared with `up` and `init`. */
export const engineFlagOptions = {
  "provider-name": { type: "string" },
  environment: { type: "string" },
  kubeconfig: { type: "string" },
  backend: { type: "string" },
  concurrency: { type: "string" },
  "kube-api-qps": { type: "string" },
  "kube-api-burst": { type: "string" },
  "state-dir": { type: "string" },
  "log-level": { type: "string" },
  verbosity: { type: "string" },
  "backend-option": { type: "string", multiple: true },
  "leader-elect": { type: "boolean" },
  sharding: { type: "boolean" },
  "leader-election-namespace": { type: "string" },
  "leader-election-id": { type: "string" },
  "lease-duration": { type: "string" },
  "renew-deadline": { type: "string" },
  "retry-period": { type: "string" },
  "metrics-bind-address": { type: "string" },
  "health-probe-bind-address": { type: "string" },
  "prepare-access-requests": { type: "boolean" },
  "access-token-validity": { type: "string" },
  schedule: { type: "boolean" },
  capi: { type: "boolean" },
  "scheduler-config": { type: "string" },
  "scheduler-config-map": { type: "string" },
} as const;

/** Parsed values of {@link engineFlagOptions}. */

/** Defaults a subcommand may change (e.g. `up` runs with probes off and no leader election). */
export interface EngineFlagDefaults {
  readonly providerName?: string;
  readonly backend?: string;
  readonly environment?: string;
  readonly leaderElect?: boolean;
  readonly metricsAddress?: string;
  readonly healthAddress?: string;
}

/** The openMCP operator's `--verbosity` values, mapped to log levels. */
const verbosityLevels: Readonly<Record<string, LogLevel>> = {
  debug: "debug",
  info: "info",
  warn: "warn",
  warning: "warn",
  error: "error",
};

/** Parses the engine's flags with `extra` options of the subcommand; unknown flags are a UsageError. */
export function parseEngineArgs(
  args: string[],
  usage: string,
  extra: Record<string, unknown> = {},
): EngineFlagValues {
  try {
    return parseArgs({
      args,
      options: { ...engineFlagOptions, ...extra } as typeof engineFlagOptions,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    }).values as EngineFlagValues;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

/** Checks and converts the engine flags; `defaults` fill what the user left out. */
export function engineFlags(
  values: EngineFlagValues,
  usage: string,
  defaults: EngineFlagDefaults = {},
  env: NodeJS.ProcessEnv = process.env,
): RunFlags {
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  const verbosity = text("verbosity");
  const logLevel =
    verbosity !== undefined ? verbosityLevels[verbosity.toLowerCase()] : (text("log-level") ?? "info");
  if (verbosity !== undefined && logLevel === undefined) {
    throw new UsageError(`--verbosity "${verbosity}" must be DEBUG, INFO or ERROR`, usage);
  }
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel ?? "")) {
    throw new UsageError(`--log-level "${logLevel}" must be one of ${LOG_LEVELS.join(", ")}`, usage);
  }
  const backendOptions: Record<string, string> = {};
  for (const option of (values["backend-option"] as string[] | undefined) ?? []) {
    const at = option.indexOf("=");
    if (at <= 0) throw new UsageError(`--backend-option "${option}" must look like key=value`, usage);
    backendOptions[option.slice(0, at)] = option.slice(at + 1);
  }
  const providerName = parseDnsLabel("provider-name", text("provider-name") ?? defaults.providerName, usage);
  const duration = (flag: string, fallback: number) => {
    const value = text(flag);
    if (value === undefined) return fallback;
    const ms = parseDuration(value);
    if (ms === undefined || ms <= 0)
      throw new UsageError(`--${flag} "${value}" is not a duration like 15s`, usage);
    return ms;
  };
  const timing: LeaderElectionTiming = {
    leaseDurationMs: duration("lease-duration", DEFAULT_LEADER_ELECTION.leaseDurationMs),
    renewDeadlineMs: duration("renew-deadline", DEFAULT_LEADER_ELECTION.renewDeadlineMs),
    retryPeriodMs: duration("retry-period", DEFAULT_LEADER_ELECTION.retryPeriodMs),
  };
  if (!(timing.retryPeriodMs < timing.renewDeadlineMs && timing.renewDeadlineMs < timing.leaseDurationMs)) {
    throw new UsageError("leader election needs --retry-period < --renew-deadline < --lease-duration", usage);
  }
  const sharding = values.sharding === true;
  if (sharding && values["leader-elect"] === true)
    throw new UsageError(
      "--sharding and --leader-elect exclude each other: sharded replicas all work",
      usage,
    );
  const leaderElect =
    !sharding &&
    (typeof values["leader-elect"] === "boolean"
      ? values["leader-elect"]
      : (defaults.leaderElect ?? Boolean(env.POD_NAMESPACE)));
  const leaseNamespace = text("leader-election-namespace") ?? env.POD_NAMESPACE ?? "default";
  return {
    providerName,
    environment: parseDnsLabel(
      "environment",
      text("environment") ?? defaults.environment ?? "default",
      usage,
    ),
    kubeconfig: text("kubeconfig"),
    backend: text("backend") ?? defaults.backend ?? "simulated",
    concurrency: parseInteger("concurrency", text("concurrency") ?? "4", 1, 64, usage),
    apiRateLimit: apiRateLimitFlags(text("kube-api-qps"), text("kube-api-burst"), usage),
    stateDirectory: resolve(text("state-dir") ?? ".state/engine"),
    logLevel: logLevel as LogLevel,
    backendOptions,
    sharding: sharding ? { namespace: leaseNamespace, timing } : undefined,
    leaderElection: leaderElect
      ? {
          namespace: leaseNamespace,
          name: text("leader-election-id") ?? `${providerName}.engine.openmcp.cloud`,
          timing,
        }
      : undefined,
    metricsAddress: text("metrics-bind-address") ?? defaults.metricsAddress ?? ":8080",
    healthAddress: text("health-probe-bind-address") ?? defaults.healthAddress ?? ":8081",
    prepareAccessRequests: values["prepare-access-requests"] !== false,
    tokenValidityMs: (() => {
      const ms = duration("access-token-validity", 86_400_000);
      if (ms < 600_000)
        throw new UsageError(
          "--access-token-validity must be at least 10m (the API server's minimum)",
          usage,
        );
      return ms;
    })(),
    schedule: values.schedule !== false,
    capi: typeof values.capi === "boolean" ? values.capi : undefined,
    schedulerConfig: schedulerConfigFlag(text("scheduler-config"), text("scheduler-config-map"), usage),
  };
}

/** `--kube-api-qps` and `--kube-api-burst`: a limit when qps is above 0. */
function apiRateLimitFlags(
  qpsText: string | undefined,
  burstText: string | undefined,
  usage: string,
): RunFlags["apiRateLimit"] {
  const qps = qpsText === undefined ? 0 : Number(qpsText);
  if (!Number.isFinite(qps) || qps < 0 || qps > 100_000) {
    throw new UsageError(`--kube-api-qps "${qpsText}" must be a number from 0 (no limit) to 100000`, usage);
  }
  if (qps === 0) {
    if (burstText !== undefined) throw new UsageError("--kube-api-burst needs --kube-api-qps above 0", usage);
    return undefined;
  }
  const burst =
    burstText === undefined
      ? Math.max(1, Math.ceil(2 * qps))
      : parseInteger("kube-api-burst", burstText, 1, 1_000_000, usage);
  return { qps, burst };
}

/** `--scheduler-config` or `--scheduler-config-map`, never both. */
function schedulerConfigFlag(
  file: string | undefined,
  configMap: string | undefined,
  usage: string,
): RunFlags["schedulerConfig"] {
  if (file !== undefined && configMap !== undefined) {
    throw new UsageError("give --scheduler-config or --scheduler-config-map, not both", usage);
  }
  if (file !== undefined) return { file: resolve(file) };
  if (configMap === undefined) return undefined;
  const [namespace, name, ...rest] = configMap.split("/");
  if (!namespace || !name || rest.length > 0) {
    throw new UsageError(`--scheduler-config-map "${configMap}" must look like <namespace>/<name>`, usage);
  }
  return { configMap: { namespace, name } };
}

/** Loads the backend the flags name; it keeps its state in a folder of its own under the state folder. */
export async function backendFromFlags(
  flags: RunFlags,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
  log: Logger,
): Promise<ClusterBackend> {
  const stateDirectory = join(flags.stateDirectory, flags.backend.replace(/[^a-zA-Z0-9._-]+/g, "_"));
  mkdirSync(stateDirectory, { recursive: true });
  return createBackend(flags.backend, {
    stateDirectory,
    options: flags.backendOptions,
    log: log.with({ backend: flags.backend }),
    clock: systemClock,
    readSecret: apiSecretReader(kubeConfig),
  });
}

/** The scheduler configuration's source the flags name, saying in the log what scheduling will do. */
function schedulerConfigFromFlags(
  flags: RunFlags,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
  log: Logger,
  env: NodeJS.ProcessEnv,
): SchedulerConfigSource | undefined {
  if (!flags.schedule) {
    log.info("scheduler off (--no-schedule): ClusterRequests are left to another scheduler");
    return undefined;
  }
  const where = flags.schedulerConfig;
  if (where === undefined) {
    log.warn(
      "scheduler on without a configuration (--scheduler-config or --scheduler-config-map): every ClusterRequest shows ConfigurationProblem until one is given; --no-schedule turns scheduling off",
    );
    return undefined;
  }
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
async function capiSideFromFlags(
  wanted: boolean | undefined,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
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

/** Builds the engine the flags describe. */
export async function engineFromFlags(
  flags: RunFlags,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
  write?: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  extra: Pick<EngineOptions, "observers"> = {},
): Promise<Engine> {
  const log = createLogger({ level: flags.logLevel, ...(write ? { write } : {}) });
  const backend = await backendFromFlags(flags, kubeConfig, log);
  const election = flags.leaderElection;
  // Unique per process: a restarted pod of the same name is a new member, never mistaken for the old one.
  const identity = `${env.POD_NAME ?? hostname()}_${randomUUID().slice(0, 8)}`;
  const schedulerConfig = schedulerConfigFromFlags(flags, kubeConfig, log, env);
  const capi = await capiSideFromFlags(flags.capi, kubeConfig, log);
  return new Engine({
    kubeConfig,
    providerName: flags.providerName,
    environment: flags.environment,
    backend,
    concurrency: flags.concurrency,
    ...(flags.apiRateLimit ? { apiRateLimit: flags.apiRateLimit } : {}),
    log,
    ...(extra.observers?.length ? { observers: extra.observers } : {}),
    prepareAccessRequests: flags.prepareAccessRequests,
    schedule: flags.schedule,
    capi,
    ...(schedulerConfig ? { schedulerConfig } : {}),
    accessTiming: { ...DEFAULT_ACCESS_TIMING, tokenValidityMs: flags.tokenValidityMs },
    ...(election ? { leaderElection: { ...election, identity } } : {}),
    ...(flags.sharding ? { sharding: { ...flags.sharding, identity } } : {}),
    onLostLeadership: () => {
      log.error(
        election
          ? "leadership lost; exiting so that a fresh start rejoins the election"
          : "membership lease lost; exiting so that a fresh start rejoins the ring",
      );
      process.exit(1);
    },
  });
}

/** Runs the engine until a signal; a second signal exits at once. */
export async function run(args: string[]): Promise<void> {
  const values = parseEngineArgs(args, runUsage, viewFlagOptions);
  const flags = engineFlags(values, runUsage);
  const view = viewFlags(values, runUsage);
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  const log = createLogger({ level: flags.logLevel });
  const views = await startViews(view, { log });
  const engine = await engineFromFlags(flags, kubeConfig, undefined, process.env, {
    observers: views.observers,
  });
  views.attach(engine);
  engine.metrics.collectProcessMetrics(); // this process is the engine: its heap, RSS, GC and event loop
  const probes = await startProbeServers({
    metricsAddress: flags.metricsAddress,
    healthAddress: flags.healthAddress,
    metrics: engine.metrics,
    ready: () => engine.hasSynced(),
    log,
  });
  log.info("connecting", { kubeconfig: source, server: kubeConfig.getCurrentCluster()?.server });
  // The engine's timers are unreferenced; this keeps the process up while it waits for the API server.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = untilSignal(async (signal) => {
    log.info("shutting down", { signal });
    clearInterval(keepAlive);
    await engine.stop();
    await probes.close();
    await views.close();
  });
  await engine.start();
  await stopped;
}

/** Resolves after `onSignal` finished for the first SIGINT/SIGTERM; a second one exits with 130/143. */
export function untilSignal(onSignal: (signal: NodeJS.Signals) => Promise<void>): Promise<void> {
  return new Promise((resolveDone, rejectDone) => {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(signal === "SIGINT" ? 130 : 143);
      stopping = true;
      onSignal(signal).then(() => {
        process.off("SIGINT", handler);
        process.off("SIGTERM", handler);
        resolveDone();
      }, rejectDone);
    };
    process.on("SIGINT", handler);
    process.on("SIGTERM", handler);
  });
}
