/** What the backend conformance kit is told: how hard to test, what to check beside the contract, how to replay. */
import type { BackendContext, ClusterBackend } from "../api/backend-contract.ts";
import type { JsonObject } from "../api/common.ts";
import type { ProviderConfig } from "../api/provider-config.ts";

/** How hard to test. Defaults suit a fast backend; slow ones lower `numRuns`/`maxCommands` and raise `readyTimeoutMs`. */
export interface ConformanceOptions {
  /** Random call sequences to try (default 20). */
  readonly numRuns?: number;
  /** Calls per sequence at most (default 10). */
  readonly maxCommands?: number;
  /** How long "eventually ready" and "eventually gone" may take (default 10 s). */
  readonly readyTimeoutMs?: number;
  /**
   * The ProviderConfig the clusters come from, as `supportedVersions`, `traits` and `readOffer` are given it
   * (default: one for this backend listing no versions, whose `spec.settings` are `settings`).
   */
  readonly config?: ProviderConfig;
  /** `spec.settings` given with every target and, when `config` is not given, in the default config (default: the config's). */
  readonly settings?: JsonObject;
  /**
   * Whether the kit proves that admin access works (default true), for a backend whose `capabilities.adminAccess`
   * is true: it uses the returned kubeconfig against the cluster (a SelfSubjectReview, then SelfSubjectAccessReviews)
   * and fails unless it authenticates and may do what the backend declares — cluster-admin, or admin of each of
   * `scope.namespaces`. Give `false` only for a backend whose clusters are stand-ins, not API servers (a
   * simulation): the kit then checks only that the kubeconfig names the observed endpoint.
   */
  readonly verifyAdminAccess?: boolean;
  /** Overrides of the factory's context (options, readSecret, …); the kit supplies the state folder. */
  readonly context?: Partial<Omit<BackendContext, "stateDirectory">>;
  /**
   * Lists what a backend left behind after everything was deleted (processes, folders); must be empty. `run.uids`
   * are the uids of this run's clusters, so shared infrastructure can be searched for this run's things only: a
   * failed run's remains must not make the next runs fail in its place.
   */
  readonly leftovers?: (stateDirectory: string, run: ConformanceRun) => Promise<string[]>;
  /** Clusters the backend holds right now, if it can tell; never more than the Cluster objects that exist. */
  readonly liveClusters?: (backend: ClusterBackend) => Promise<number> | number;
  /** Seed and path, to replay a failure (both are printed with it). */
  readonly seed?: number;
  readonly path?: string;
  /** The call sequence's own replay path (fast-check's `replayPath`), printed with a failure beside the path. */
  readonly replayPath?: string;
}

/** One run of the kit, as `leftovers` sees it. */
export interface ConformanceRun {
  /** The uids of the run's cluster targets, index by index. */
  readonly uids: readonly string[];
}

/** What the kit's parts beyond the core (pools, snapshots) are given: how patient to be, and what the factory gets. */
export interface KitPartOptions {
  /** How long "eventually ready" and "eventually gone" may take (default 10 s). */
  readonly readyTimeoutMs?: number;
  readonly context?: Partial<Omit<BackendContext, "stateDirectory">>;
  /** The ProviderConfig the clusters come from (default: one for this backend with `settings`). */
  readonly config?: ProviderConfig;
  /** `spec.settings` given with every target (default: the config's). */
  readonly settings?: JsonObject;
}
