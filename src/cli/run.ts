/** `openmcp-engine run`: the controller, until SIGTERM or Ctrl-C. */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { BUILT_IN_BACKENDS, createBackend } from "../providers/registry.ts";
import { Engine } from "../runtime/engine.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "../runtime/logger.ts";
import { parseDnsLabel, parseDuration, parseFraction, parseInteger } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

export const runUsage = `Usage: openmcp-engine run --provider-name <name> [flags]

Runs the controller: ProviderConfigs become ClusterProfiles, Clusters whose profile is ours are built by
the backend. Stops gracefully on SIGTERM or Ctrl-C.

Flags:
  --provider-name <name>          this provider's name; profiles naming it are ours (required)
  --environment <name>            first part of generated profile names (default: default)
  --kubeconfig <path>             API server access (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)
  --backend <name>                ${BUILT_IN_BACKENDS.join(", ")} (default: simulated)
  --concurrency <n>               Clusters reconciled at once, 1-64 (default: 4)
  --state-dir <path>              where backends keep state across restarts (default: .state/engine)
  --log-level <level>             ${LOG_LEVELS.join(", ")} (default: info)
  --simulated-delay <duration>    simulated backend: time to provision, update or delete (default: 3s)
  --simulated-failure-rate <0-1>  simulated backend: chance that a command fails (default: 0)
  -h, --help                      show this help`;

/** Parsed flags of `run` (also used by `up`, which runs the same engine). */
export interface RunFlags {
  readonly providerName: string;
  readonly environment: string;
  readonly kubeconfig: string | undefined;
  readonly backend: string;
  readonly concurrency: number;
  readonly stateDirectory: string;
  readonly logLevel: LogLevel;
  readonly simulatedDelayMs: number;
  readonly simulatedFailureRate: number;
}

/** The flag definitions of the engine, shared with `up`. */
export const engineFlagOptions = {
  "provider-name": { type: "string" },
  environment: { type: "string" },
  kubeconfig: { type: "string" },
  backend: { type: "string" },
  concurrency: { type: "string" },
  "state-dir": { type: "string" },
  "log-level": { type: "string" },
  "simulated-delay": { type: "string" },
  "simulated-failure-rate": { type: "string" },
} as const;

/** Checks and converts the engine flags; `defaults` fill what the user left out. */
export function engineFlags(
  values: Partial<Record<keyof typeof engineFlagOptions, string>>,
  usage: string,
  defaults: { providerName?: string; environment?: string } = {},
): RunFlags {
  const logLevel = values["log-level"] ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level "${logLevel}" must be one of ${LOG_LEVELS.join(", ")}`, usage);
  }
  const backend = values.backend ?? "simulated";
  if (!BUILT_IN_BACKENDS.includes(backend)) {
    throw new UsageError(
      `--backend "${backend}" is unknown; built-in backends: ${BUILT_IN_BACKENDS.join(", ")}`,
      usage,
    );
  }
  return {
    providerName: parseDnsLabel("provider-name", values["provider-name"] ?? defaults.providerName, usage),
    environment: parseDnsLabel("environment", values.environment ?? defaults.environment ?? "default", usage),
    kubeconfig: values.kubeconfig,
    backend,
    concurrency: parseInteger("concurrency", values.concurrency ?? "4", 1, 64, usage),
    stateDirectory: resolve(values["state-dir"] ?? ".state/engine"),
    logLevel: logLevel as LogLevel,
    simulatedDelayMs: parseDuration("simulated-delay", values["simulated-delay"] ?? "3s", usage),
    simulatedFailureRate: parseFraction(
      "simulated-failure-rate",
      values["simulated-failure-rate"] ?? "0",
      usage,
    ),
  };
}

/** Builds the engine the flags describe (the backend keeps its state under the state folder). */
export function engineFromFlags(
  flags: RunFlags,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
  write?: (line: string) => void,
): Engine {
  mkdirSync(flags.stateDirectory, { recursive: true });
  const delay = flags.simulatedDelayMs;
  const backend = createBackend(flags.backend, {
    stateDirectory: flags.stateDirectory,
    simulated: {
      provisionDelayMs: delay,
      updateDelayMs: delay,
      deleteDelayMs: delay,
      failureRate: flags.simulatedFailureRate,
    },
  });
  return new Engine({
    kubeConfig,
    providerName: flags.providerName,
    environment: flags.environment,
    backend,
    concurrency: flags.concurrency,
    log: createLogger({ level: flags.logLevel, ...(write ? { write } : {}) }),
  });
}

/** Runs the engine until a signal; a second signal exits at once. */
export async function run(args: string[]): Promise<void> {
  let values: Partial<Record<keyof typeof engineFlagOptions, string>>;
  try {
    values = parseArgs({ args, options: engineFlagOptions, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, runUsage);
  }
  const flags = engineFlags(values, runUsage);
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  const engine = engineFromFlags(flags, kubeConfig);
  const log = createLogger({ level: flags.logLevel });
  log.info("connecting", { kubeconfig: source, server: kubeConfig.getCurrentCluster()?.server });
  // The engine's timers are unreferenced; this keeps the process up while it waits for the API server.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const stopped = untilSignal(async (signal) => {
    log.info("shutting down", { signal });
    clearInterval(keepAlive);
    await engine.stop();
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
