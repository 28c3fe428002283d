/**
 * The scheduler configuration, in the openMCP operator's format (`scheduler:` with scope, strategy,
 * selectors and purposeMappings), so a configuration written for it works here unchanged.
 */

import type { Tenancy } from "./cluster.ts";

/** A Kubernetes label selector (metav1.LabelSelector). Empty or absent selects everything. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** One requirement of a {@link LabelSelector}. */
export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  /** Required (non-empty) for In and NotIn, absent for Exists and DoesNotExist. */
  readonly values?: readonly string[];
}

/** Where candidate Clusters come from: all namespaces, or the template's (else the request's) namespace. */
export type SchedulerScope = "Cluster" | "Namespaced";

/**
 * How one of several fitting Clusters is chosen: fewest requests first (first on a tie); the same but
 * filling clusters that already serve someone before empty ones; random (seeded per request); the first.
 */
export type SchedulerStrategy = (typeof SCHEDULER_STRATEGIES)[number];

/** Every {@link SchedulerStrategy}, as the openMCP scheduler names them. */
export const SCHEDULER_STRATEGIES = ["Balanced", "BalancedIgnoreEmpty", "Random", "Simple"] as const;

/** The Cluster the scheduler makes for a purpose. */
export interface ClusterTemplate {
  readonly metadata: {
    readonly name?: string;
    readonly generateName?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly profile: string;
    readonly tenancy: Tenancy;
    readonly purposes?: readonly string[];
    readonly kubernetes?: { readonly version?: string };
    readonly clusterConfigs?: readonly { readonly name: string }[];
  };
}

/** How requests of one purpose are served. */
export interface PurposeMapping {
  /** Shared only: requests one Cluster serves at most; 0 = unlimited. Always 0 for Exclusive. */
  readonly tenancyCount: number;
  /** Candidate Clusters must also match this (ANDed with the global cluster selector). */
  readonly selector?: LabelSelector;
  readonly template: ClusterTemplate;
}

/** The whole configuration, defaults filled in. */
export interface SchedulerConfig {
  readonly scope: SchedulerScope;
  readonly strategy: SchedulerStrategy;
  readonly selectors: {
    /** Only these Clusters are candidates. */
    readonly clusters?: LabelSelector;
    /** Only these ClusterRequests are served. */
    readonly requests?: LabelSelector;
  };
  readonly purposeMappings: Readonly<Record<string, PurposeMapping>>;
  /**
   * The engine's one addition to the format: purposes whose requests another scheduler answers (the
   * openMCP operator's kcp mode grants `onboarding` and `mcp` itself). Such a request is never written,
   * not even with a ConfigurationProblem, unless this engine's scheduler already holds it. Absent: none.
   */
  readonly purposesServedElsewhere?: readonly string[];
}
