/** `openmcp-engine run`: the controller, until SIGTERM or Ctrl-C. */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseDuration } from "../api/duration.ts";
import { BUILT_IN_BACKENDS } from "../providers/registry.ts";
import { loadKubeConfig } from "../runtime/api-server/load-kubeconfig.ts";
import { MACHINE_KINDS } from "../runtime/kinds/registry.ts";
import { DEFAULT_LEADER_ELECTION, type LeaderElectionTiming } from "../runtime/leadership/leader-election.ts";
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from "../runtime/logger.ts";
import { startEngine } from "../runtime/start/engine-from-settings.ts";
import { DEFAULT_SETTINGS, type EngineSettings } from "../runtime/start/engine-settings.ts";
import {
  type EngineFlagValues,
  type FlagSpec,
  flagUsage,
  normalizeBooleanAssignments,
  parseDnsLabel,
  parseInteger,
  parseNamespace,
  parseOptions,
  parseWatchFilter,
  withFlagsFromEnvironment,
} from "./flags.ts";
import { UsageError } from "./usage-error.ts";
import { startViews, viewFlagOptions, viewFlags, viewFlagsUsage } from "./views.ts";

/** Parsed flags of `run` (also used by `up` and `init`): the engine's settings, the backend named (if any). */
export type RunFlags = EngineSettings & { readonly backend: string | undefined };

/** The engine's flags, shared with `up` and `init`: the parser's options and `run`'s usage text come from here. */
export const ENGINE_FLAGS: readonly FlagSpec[] = [
  valueFlag(
    "provider-name",
    "--provider-name <name>",
    "this provider's name; profiles naming it are ours (required)",
  ),
  valueFlag(
    "environment",
    "--environment <name>",
    "first part of generated profile names (default: default)",
  ),
  valueFlag(
    "kubeconfig",
    "--kubeconfig <path>",
    "API server access (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)",
  ),
  valueFlag(
    "backend",
    "--backend <name|path|package>",
    `a built-in (${BUILT_IN_BACKENDS.join(", ")}), a module file or a package`,
    "exporting createBackend (default: each ProviderConfig's spec.backend, built-ins only)",
  ),
  {
    name: "backend-option",
    type: "string",
    multiple: true,
    help: {
      label: "--backend-option <key=value>",
      lines: [
        "a setting for the backend, repeatable (simulated: delay, provisionDelay,",
        "updateDelay, deleteDelay, failureRate)",
      ],
    },
  },
  valueFlag(
    "namespace",
    "--namespace <ns>",
    "watch one namespace: namespaced kinds are listed, watched and reconciled",
    "only there (cluster-scoped kinds stay cluster-wide); empty: all (default)",
  ),
  valueFlag(
    "watch-filter",
    "--watch-filter <value>",
    "Cluster API's filter: only EngineClusters and CAPI Clusters labelled",
    "cluster.x-k8s.io/watch-filter=<value> are reconciled (openMCP kinds: all)",
  ),
  valueFlag("concurrency", "--concurrency <n>", "Clusters reconciled at once, 1-64 (default: 4)"),
  valueFlag(
    "kube-api-qps",
    "--kube-api-qps <n>",
    "client-side limit of requests a second to the API server; 0: none, the",
    "server's API Priority and Fairness decides (default: 0, as controller-runtime)",
  ),
  valueFlag(
    "kube-api-burst",
    "--kube-api-burst <n>",
    "requests above that rate allowed in a burst (default: 2 × qps)",
  ),
  valueFlag(
    "state-dir",
    "--state-dir <path>",
    "where backends keep state across restarts (default:",
    "$OPENMCP_ENGINE_STATE_DIR, else .state/engine; the image: /var/lib/openmcp-engine)",
  ),
  valueFlag("log-level", "--log-level <level>", `${LOG_LEVELS.join(", ")} (default: info)`),
  valueFlag(
    "verbosity",
    "--verbosity <DEBUG|INFO|ERROR>",
    "the same, as the openMCP operator passes it (any case)",
  ),
  {
    name: "leader-elect",
    type: "boolean",
    help: {
      label: "--leader-elect / --no-leader-elect",
      labelAlone: true,
      lines: [
        "reconcile only while holding a Lease (default: on when $POD_NAMESPACE is set);",
        "every boolean flag also takes =true / =false, as the openMCP operator writes it",
      ],
    },
  },
  switchFlag(
    "sharding",
    "--sharding",
    "every replica works, each on its share of the objects: replicas hold a",
    "membership Lease each and split the objects by consistent hashing",
    "(instead of leader election; see the README)",
  ),
  valueFlag(
    "leader-election-namespace",
    "--leader-election-namespace <ns>",
    "namespace of the Lease(s) (default: $POD_NAMESPACE, else default)",
  ),
  valueFlag(
    "leader-election-id",
    "--leader-election-id <name>",
    "name of the Lease (default: <provider-name>.engine.openmcp.cloud)",
  ),
  {
    name: "lease-duration",
    type: "string",
    help: {
      label: "--lease-duration <d>, --renew-deadline <d>, --retry-period <d>",
      labelAlone: true,
      lines: ["leader election and membership timings (default: 15s, 10s, 2s)"],
    },
  },
  { name: "renew-deadline", type: "string" },
  { name: "retry-period", type: "string" },
  {
    name: "prepare-access-requests",
    type: "boolean",
    help: {
      label: "--prepare-access-requests / --no-prepare-access-requests",
      labelAlone: true,
      lines: [
        "label AccessRequests with their provider and profile, expire them by ttl",
        "(default: on; turn off beside the openMCP operator, which does it)",
      ],
    },
  },
  valueFlag(
    "resync",
    "--resync <kind>=<d>,…",
    "how often an object at rest is looked at again, by kind, e.g.",
    "Cluster=5m (defaults: Cluster, EngineCluster, EngineControlPlane 2m;",
    "AccessRequest 5m; ClusterRequest 10m); see docs/resync.md",
  ),
  valueFlag(
    "access-token-validity",
    "--access-token-validity <d>",
    "validity of issued tokens, at least 10m (default: 24h); renewed at 80 %",
  ),
  switchFlag(
    "schedule",
    "--schedule / --no-schedule",
    "answer ClusterRequests with Clusters (default: on; turn off beside the",
    "openMCP operator, whose scheduler serves them)",
  ),
  valueFlag(
    "scheduler-config",
    "--scheduler-config <path>",
    "the scheduler configuration, in the openMCP operator's format; reloaded on change",
  ),
  valueFlag(
    "scheduler-config-map",
    "--scheduler-config-map <ns/name>",
    "the same from a ConfigMap (key config.yaml), watched",
  ),
  switchFlag(
    "capi",
    "--capi / --no-capi",
    "serve Cluster API as an infrastructure provider (EngineClusters); default:",
    "on when Cluster API's CRDs are installed, off otherwise (said in the log);",
    "--capi refuses to start without them",
  ),
  switchFlag(
    "warm-pools",
    "--warm-pools",
    "keep the idle clusters ClusterPools ask for and bind new Clusters to them",
    "(default: off)",
  ),
  valueFlag(
    "metrics-bind-address",
    "--metrics-bind-address <addr>",
    "/metrics, e.g. :8080 or 127.0.0.1:8080; 0 turns it off (default: :8080)",
  ),
  switchFlag(
    "metrics-secure",
    "--metrics-secure=false",
    "accepted as the openMCP operator passes it: /metrics is plain HTTP",
  ),
  valueFlag(
    "health-probe-bind-address",
    "--health-probe-bind-address <addr>",
    "/healthz and /readyz (default: :8081)",
  ),
];

/** A flag with a value, told by its label and description lines. */
function valueFlag(name: string, label: string, ...lines: string[]): FlagSpec {
  return { name, type: "string", help: { label, lines } };
}

/** An on/off flag (`--no-<name>` turns it off), told by its label and description lines. */
function switchFlag(name: string, label: string, ...lines: string[]): FlagSpec {
  return { name, type: "boolean", help: { label, lines } };
}

/** The parser's options for the engine's flags, from {@link ENGINE_FLAGS}. */
export const engineFlagOptions = parseOptions(ENGINE_FLAGS);

export const runUsage = `Usage: openmcp-engine run --provider-name <name> [flags]

Runs the controller: ProviderConfigs become ClusterProfiles, Clusters whose profile is ours are built by
the backend. Stops gracefully on SIGTERM or Ctrl-C (a second signal exits at once).

Flags:
${flagUsage(ENGINE_FLAGS, 32)}
${viewFlagsUsage}
  -h, --help                      show this help

Environment: every flag above may be given as OPENMCP_ENGINE_<FLAG> (upper case, "-" as "_"; booleans true or
false, repeatable flags comma-separated), e.g. OPENMCP_ENGINE_SCHEDULER_CONFIG_MAP=<ns>/<name>, for deployments
that cannot pass flags (the openMCP operator's ClusterProvider sets env); a flag given wins. POD_NAME (Lease
holder identity), POD_NAMESPACE (Lease namespace), as the openMCP operator sets them.`;

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
  const options = { ...engineFlagOptions, ...extra } as typeof engineFlagOptions;
  const normalized = normalizeBooleanAssignments(args, options, usage);
  try {
    return parseArgs({
      args: normalized,
      options,
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
  given: EngineFlagValues,
  usage: string,
  defaults: EngineFlagDefaults = {},
  env: NodeJS.ProcessEnv = process.env,
): RunFlags {
  const values = withFlagsFromEnvironment(ENGINE_FLAGS, given, env, usage);
  const text = textOf(values);
  // Checked in this order, so that of several wrong flags the same one is named first as ever.
  const logLevel = logLevelFlag(text("verbosity"), text("log-level"), usage);
  const backendOptions = backendOptionsFlag(values["backend-option"] as string[] | undefined, usage);
  const providerName = parseDnsLabel("provider-name", text("provider-name") ?? defaults.providerName, usage);
  const timing = leaseTimingFlags(values, usage);
  const metricsAddress = metricsAddressFlag(values, usage, defaults);
  const replicas = replicaFlags(values, usage, { providerName, timing, defaults, env });
  return {
    providerName,
    environment: parseDnsLabel(
      "environment",
      text("environment") ?? defaults.environment ?? DEFAULT_SETTINGS.environment,
      usage,
    ),
    kubeconfig: text("kubeconfig"),
    namespace: parseNamespace(text("namespace"), usage),
    watchFilter: parseWatchFilter(text("watch-filter"), usage),
    backend: text("backend") ?? defaults.backend,
    concurrency: parseInteger(
      "concurrency",
      text("concurrency") ?? String(DEFAULT_SETTINGS.concurrency),
      1,
      64,
      usage,
    ),
    apiRateLimit: apiRateLimitFlags(text("kube-api-qps"), text("kube-api-burst"), usage),
    stateDirectory: resolve(text("state-dir") ?? DEFAULT_SETTINGS.stateDirectory),
    logLevel,
    backendOptions,
    ...replicas,
    metricsAddress,
    healthAddress: text("health-probe-bind-address") ?? defaults.healthAddress ?? ":8081",
    prepareAccessRequests: values["prepare-access-requests"] !== false,
    tokenValidityMs: tokenValidityFlag(values, usage),
    schedule: values.schedule !== false,
    capi: typeof values.capi === "boolean" ? values.capi : undefined,
    warmPools: values["warm-pools"] === true,
    resyncMs: resyncFlag(text("resync"), usage),
    schedulerConfig: schedulerConfigFlag(text("scheduler-config"), text("scheduler-config-map"), usage),
  };
}

/** Reads a flag's text value; undefined when not given. */
function textOf(values: EngineFlagValues): (name: string) => string | undefined {
  return (name) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
}

/** `--verbosity` (the openMCP operator's) or `--log-level`: one of {@link LOG_LEVELS}. */
function logLevelFlag(verbosity: string | undefined, logLevel: string | undefined, usage: string): LogLevel {
  const level = verbosity !== undefined ? verbosityLevels[verbosity.toLowerCase()] : (logLevel ?? "info");
  if (verbosity !== undefined && level === undefined) {
    throw new UsageError(`--verbosity "${verbosity}" must be DEBUG, INFO or ERROR`, usage);
  }
  if (!(LOG_LEVELS as readonly string[]).includes(level ?? "")) {
    throw new UsageError(`--log-level "${level}" must be one of ${LOG_LEVELS.join(", ")}`, usage);
  }
  return level as LogLevel;
}

/** Every `--backend-option key=value`, as settings for the backend. */
function backendOptionsFlag(options: readonly string[] | undefined, usage: string): Record<string, string> {
  const backendOptions: Record<string, string> = {};
  for (const option of options ?? []) {
    const at = option.indexOf("=");
    if (at <= 0) throw new UsageError(`--backend-option "${option}" must look like key=value`, usage);
    backendOptions[option.slice(0, at)] = option.slice(at + 1);
  }
  return backendOptions;
}

/** `--resync Cluster=2m,AccessRequest=5m`: each kind's resync period; a kind the engine does not drive is refused. */
function resyncFlag(value: string | undefined, usage: string): Readonly<Record<string, number>> {
  const periods: Record<string, number> = {};
  const kinds = MACHINE_KINDS.map((kind) => kind.definition.kind);
  for (const entry of (value ?? "").split(",").filter((item) => item.trim() !== "")) {
    const [kind = "", duration = ""] = entry.split("=").map((part) => part.trim());
    if (!kinds.includes(kind))
      throw new UsageError(
        `--resync: "${kind}" is not a kind the engine drives (${kinds.join(", ")})`,
        usage,
      );
    const ms = parseDuration(duration);
    if (ms === undefined || ms < 1_000)
      throw new UsageError(
        `--resync: ${kind}'s "${duration}" is not a duration of at least 1s, like 2m`,
        usage,
      );
    periods[kind] = ms;
  }
  return periods;
}

/** A duration flag (`15s`, `10m`) in milliseconds, above 0; `fallback` when not given. */
function durationFlag(values: EngineFlagValues, flag: string, fallback: number, usage: string): number {
  const value = textOf(values)(flag);
  if (value === undefined) return fallback;
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0)
    throw new UsageError(`--${flag} "${value}" is not a duration like 15s`, usage);
  return ms;
}

/** The Lease timings of leader election and sharding: retry period < renew deadline < lease duration. */
function leaseTimingFlags(values: EngineFlagValues, usage: string): LeaderElectionTiming {
  const timing: LeaderElectionTiming = {
    leaseDurationMs: durationFlag(values, "lease-duration", DEFAULT_LEADER_ELECTION.leaseDurationMs, usage),
    renewDeadlineMs: durationFlag(values, "renew-deadline", DEFAULT_LEADER_ELECTION.renewDeadlineMs, usage),
    retryPeriodMs: durationFlag(values, "retry-period", DEFAULT_LEADER_ELECTION.retryPeriodMs, usage),
  };
  if (!(timing.retryPeriodMs < timing.renewDeadlineMs && timing.renewDeadlineMs < timing.leaseDurationMs)) {
    throw new UsageError("leader election needs --retry-period < --renew-deadline < --lease-duration", usage);
  }
  return timing;
}

/** How replicas share the work: sharding (all work, each on its share), leader election (one works), or neither. */
function replicaFlags(
  values: EngineFlagValues,
  usage: string,
  context: {
    readonly providerName: string;
    readonly timing: LeaderElectionTiming;
    readonly defaults: EngineFlagDefaults;
    readonly env: NodeJS.ProcessEnv;
  },
): Pick<RunFlags, "sharding" | "leaderElection"> {
  const { providerName, timing, defaults, env } = context;
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
  const text = textOf(values);
  const namespace = text("leader-election-namespace") ?? env.POD_NAMESPACE ?? "default";
  return {
    sharding: sharding ? { namespace, timing } : undefined,
    leaderElection: leaderElect
      ? { namespace, name: text("leader-election-id") ?? `${providerName}.engine.openmcp.cloud`, timing }
      : undefined,
  };
}

/** `--metrics-bind-address`; `--metrics-secure` is accepted only as false (plain HTTP). */
function metricsAddressFlag(values: EngineFlagValues, usage: string, defaults: EngineFlagDefaults): string {
  if (values["metrics-secure"] === true) {
    throw new UsageError(
      "--metrics-secure: /metrics is served over plain HTTP; put TLS in front of it (e.g. kube-rbac-proxy) and pass --metrics-secure=false",
      usage,
    );
  }
  return textOf(values)("metrics-bind-address") ?? defaults.metricsAddress ?? ":8080";
}

/** `--access-token-validity`: at least 10 minutes, the API server's minimum for a TokenRequest. */
function tokenValidityFlag(values: EngineFlagValues, usage: string): number {
  const ms = durationFlag(values, "access-token-validity", DEFAULT_SETTINGS.tokenValidityMs, usage);
  if (ms < 600_000)
    throw new UsageError("--access-token-validity must be at least 10m (the API server's minimum)", usage);
  return ms;
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

/** Runs the engine until a signal; a second signal exits at once. */
export async function run(args: string[]): Promise<void> {
  const values = parseEngineArgs(args, runUsage, viewFlagOptions);
  const flags = engineFlags(values, runUsage);
  const view = viewFlags(values, runUsage);
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  const log = createLogger({ level: flags.logLevel });
  const views = await startViews(view, { log });
  log.info("connecting", { kubeconfig: source, server: kubeConfig.getCurrentCluster()?.server });
  const abort = new AbortController();
  const running = startEngine({
    ...flags,
    kubeconfig: kubeConfig,
    log,
    observers: views.observers,
    beforeStart: (engine) => views.attach(engine),
    processMetrics: true, // this process is the engine: its heap, RSS, GC and event loop
    signal: abort.signal,
    onLost: () => exitOnLost(log, flags),
  });
  const stopped = untilSignal(async (signal) => {
    log.info("shutting down", { signal });
    abort.abort();
    await (await running).stop();
    await views.close();
  });
  await running;
  await stopped;
}

/** Leadership or membership lost: exit, so that a fresh start rejoins the election or the ring. */
export function exitOnLost(log: Logger, flags: Pick<RunFlags, "leaderElection">): never {
  log.error(
    flags.leaderElection
      ? "leadership lost; exiting so that a fresh start rejoins the election"
      : "membership lease lost; exiting so that a fresh start rejoins the ring",
  );
  process.exit(1);
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
