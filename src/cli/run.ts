/** `openmcp-engine run`: the controller, until SIGTERM or Ctrl-C. */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { BUILT_IN_BACKENDS, createBackend } from "../providers/registry.ts";
import { systemClock } from "../runtime/clock.ts";
import { Engine } from "../runtime/engine.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "../runtime/logger.ts";
import { apiSecretReader } from "../runtime/secret-reader.ts";
import { parseDnsLabel, parseInteger } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

export const runUsage = `Usage: openmcp-engine run --provider-name <name> [flags]

Runs the controller: ProviderConfigs become ClusterProfiles, Clusters whose profile is ours are built by
the backend. Stops gracefully on SIGTERM or Ctrl-C.

Flags:
  --provider-name <name>          this provider's name; profiles naming it are ours (required)
  --environment <name>            first part of generated profile names (default: default)
  --kubeconfig <path>             API server access (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)
  --backend <name|path|package>   a built-in (${BUILT_IN_BACKENDS.join(", ")}), a module file or a package
                                  exporting createBackend (default: simulated)
  --backend-option <key=value>    a setting for the backend, repeatable (simulated: delay, provisionDelay,
                                  updateDelay, deleteDelay, failureRate)
  --concurrency <n>               Clusters reconciled at once, 1-64 (default: 4)
  --state-dir <path>              where backends keep state across restarts (default: .state/engine)
  --log-level <level>             ${LOG_LEVELS.join(", ")} (default: info)
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
  readonly backendOptions: Readonly<Record<string, string>>;
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
  "backend-option": { type: "string", multiple: true },
} as const;

/** Parsed values of {@link engineFlagOptions}. */
export type EngineFlagValues = {
  readonly [K in keyof typeof engineFlagOptions]?: (typeof engineFlagOptions)[K] extends { multiple: true }
    ? string[]
    : string;
};

/** Checks and converts the engine flags; `defaults` fill what the user left out. */
export function engineFlags(
  values: EngineFlagValues,
  usage: string,
  defaults: { providerName?: string; environment?: string } = {},
): RunFlags {
  const logLevel = values["log-level"] ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level "${logLevel}" must be one of ${LOG_LEVELS.join(", ")}`, usage);
  }
  const backend = values.backend ?? "simulated";
  const backendOptions: Record<string, string> = {};
  for (const option of values["backend-option"] ?? []) {
    const at = option.indexOf("=");
    if (at <= 0) throw new UsageError(`--backend-option "${option}" must look like key=value`, usage);
    backendOptions[option.slice(0, at)] = option.slice(at + 1);
  }
  return {
    providerName: parseDnsLabel("provider-name", values["provider-name"] ?? defaults.providerName, usage),
    environment: parseDnsLabel("environment", values.environment ?? defaults.environment ?? "default", usage),
    kubeconfig: values.kubeconfig,
    backend,
    concurrency: parseInteger("concurrency", values.concurrency ?? "4", 1, 64, usage),
    stateDirectory: resolve(values["state-dir"] ?? ".state/engine"),
    logLevel: logLevel as LogLevel,
    backendOptions,
  };
}

/** Builds the engine the flags describe; the backend keeps its state in a folder of its own under the state folder. */
export async function engineFromFlags(
  flags: RunFlags,
  kubeConfig: ReturnType<typeof loadKubeConfig>["kubeConfig"],
  write?: (line: string) => void,
): Promise<Engine> {
  const log = createLogger({ level: flags.logLevel, ...(write ? { write } : {}) });
  const stateDirectory = join(flags.stateDirectory, flags.backend.replace(/[^a-zA-Z0-9._-]+/g, "_"));
  mkdirSync(stateDirectory, { recursive: true });
  const backend = await createBackend(flags.backend, {
    stateDirectory,
    options: flags.backendOptions,
    log: log.with({ backend: flags.backend }),
    clock: systemClock,
    readSecret: apiSecretReader(kubeConfig),
  });
  return new Engine({
    kubeConfig,
    providerName: flags.providerName,
    environment: flags.environment,
    backend,
    concurrency: flags.concurrency,
    log,
  });
}

/** Runs the engine until a signal; a second signal exits at once. */
export async function run(args: string[]): Promise<void> {
  let values: EngineFlagValues;
  try {
    values = parseArgs({ args, options: engineFlagOptions, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, runUsage);
  }
  const flags = engineFlags(values, runUsage);
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  const engine = await engineFromFlags(flags, kubeConfig);
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
