/**
 * Every machine-backed kind the engine drives, one entry each. The list feeds the caches and
 * controllers of the engine, the statechart export, `explain` and the live view: adding a kind is a
 * folder in `src/machines` and one entry here (see docs/add-a-kind.md).
 */
import type { AccessTiming } from "../../machines/access-request/step.ts";
import type { RequeueTiming } from "../../machines/shared/machine-tags.ts";
import type { KindSettings, MachineKind, SchedulerConfigView } from "../machine-kind.ts";
import { accessRequestKind } from "./access-request/kind.ts";
import { clusterKind } from "./cluster/kind.ts";
import { clusterRequestKind } from "./cluster-request/kind.ts";
import { engineClusterKind } from "./engine-cluster/kind.ts";
import { engineControlPlaneKind } from "./engine-control-plane/kind.ts";

/**
 * The ProviderConfig kind, which no machine drives: its controller keeps each config's ClusterProfile in
 * step, and its cache tells the engine's backends which backend a config names.
 */
export { PROFILE_CACHES } from "./provider-config/caches.ts";
export { ProfileController } from "./provider-config/profile-controller.ts";

/** The built-in kinds, in the order they are shown; each says itself whether an engine drives it (`enabled`). */
export const MACHINE_KINDS: readonly MachineKind[] = [
  clusterKind as MachineKind,
  clusterRequestKind as MachineKind,
  accessRequestKind as MachineKind,
  engineClusterKind as MachineKind,
  engineControlPlaneKind as MachineKind,
];

/**
 * The engine's shorthand options for the built-in kinds (the CLI's flags). No kind reads them: each is
 * turned into the settings of the kinds it concerns ({@link builtInKindSettings}), and `kindSettings`
 * given by kind name wins over them.
 */
export interface BuiltInKindOptions {
  /** When to look again at the objects of the kinds that build clusters (Cluster, EngineCluster, EngineControlPlane). */
  readonly timing?: RequeueTiming;
  /** Run the generic AccessRequest preparation (default true; off beside the openMCP operator, which does it). */
  readonly prepareAccessRequests?: boolean;
  /** Validity of issued tokens and polling of AccessRequests (a denied one is retried at `pollMs` unless `retryMs` says otherwise). */
  readonly accessTiming?: Omit<AccessTiming, "retryMs"> & Partial<Pick<AccessTiming, "retryMs">>;
  /**
   * Schedule ClusterRequests (default true). Without a configuration no ClusterRequest is touched (beside
   * the openMCP operator, whose scheduler serves them); with one, a request another scheduler granted is
   * left as it is.
   */
  readonly schedule?: boolean;
  /** The scheduler configuration in force (a file or a ConfigMap, reloaded on change). */
  readonly schedulerConfig?: SchedulerConfigView;
  /**
   * Serve Cluster API as an infrastructure provider (EngineClusters, EngineControlPlanes; default false).
   * Needs Cluster API's CRDs installed: the engine watches CAPI Clusters.
   */
  readonly capi?: boolean;
  /** Keep the idle clusters ClusterPools ask for and serve new Clusters from them (default false; the ClusterPool CRD must be installed). */
  readonly pools?: boolean;
}

/** The settings each built-in kind gets from the shorthand options, by kind name. */
export function builtInKindSettings(options: BuiltInKindOptions): { readonly [kind: string]: KindSettings } {
  const { timing, accessTiming, schedulerConfig } = options;
  const building = { ...(timing ? { timing: { ...timing } } : {}) };
  const capi = { ...building, enabled: options.capi === true };
  return {
    Cluster: { ...building, ...(options.pools ? { pools: true } : {}) },
    // A denied request is looked at as often as one at work, unless the option says otherwise.
    AccessRequest: {
      ...(accessTiming ? { timing: { retryMs: accessTiming.pollMs, ...accessTiming } } : {}),
      prepare: options.prepareAccessRequests !== false,
    },
    ClusterRequest: { enabled: options.schedule !== false, ...(schedulerConfig ? { schedulerConfig } : {}) },
    EngineCluster: capi,
    EngineControlPlane: capi,
  };
}
