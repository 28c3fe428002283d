/**
 * The engine's settings, as `openmcp-engine run` parses its flags into them and as a program embedding the
 * engine gives them (`RunOptions`, with `run`'s defaults filled in).
 */
import { resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type { BackendFactory } from "../../api/backend-contract.ts";
import type { Logger, LogLevel } from "../../api/logger.ts";
import type { Engine } from "../engine.ts";
import { DEFAULT_LEADER_ELECTION, type LeaderElectionTiming } from "../leadership/leader-election.ts";
import type { MachineObserver } from "../machine-observer.ts";

/** A DNS label: lowercase letters, digits and '-', at most 63 characters, alphanumeric at both ends. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A label value: empty, or at most 63 of letters, digits, '-', '_' and '.', alphanumeric at both ends. */
export const LABEL_VALUE = /^(?=.{0,63}$)(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

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
  /** Each kind's resync period by kind name (`--resync`); kinds not named keep their defaults. */
  readonly resyncMs: Readonly<Record<string, number>>;
  /** Where the scheduler configuration comes from; undefined: none given. */
  readonly schedulerConfig:
    | { readonly file: string }
    | { readonly configMap: { readonly namespace: string; readonly name: string } }
    | undefined;
}

/** The defaults the `run` command and `startEngine` (engine-from-settings.ts) share. */
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
  /** Each kind's resync period by kind name; kinds not named keep their defaults. */
  readonly resyncMs?: Readonly<Record<string, number>>;
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
    resyncMs: options.resyncMs ?? {},
    schedulerConfig: options.schedulerConfig,
  };
}
