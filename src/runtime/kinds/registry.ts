/**
 * Every machine-backed kind the engine drives, one entry each. The list feeds the caches and
 * controllers of the engine, the statechart export, `explain` and the live view: adding a kind is a
 * folder in `src/machines` and one entry here (see docs/add-a-kind.md).
 */
import type { RequeueTiming } from "../../machines/shared/machine-tags.ts";
import { type KindSettings, type MachineKind, mergeSettings } from "../machine-kind.ts";
import { type AccessRequestSettings, accessRequestKind } from "./access-request/kind.ts";
import type { CapiOwnedSettings } from "./capi-owned/kind.ts";
import { type ClusterSettings, clusterKind } from "./cluster/kind.ts";
import { type ClusterRequestSettings, clusterRequestKind } from "./cluster-request/kind.ts";
import { type ClusterSnapshotSettings, clusterSnapshotKind } from "./cluster-snapshot/kind.ts";
import { clusterSnapshotScheduleKind } from "./cluster-snapshot-schedule/kind.ts";
import { engineClusterKind } from "./engine-cluster/kind.ts";
import { engineControlPlaneKind } from "./engine-control-plane/kind.ts";
import { hibernationScheduleKind } from "./hibernation-schedule/kind.ts";
import { rolloutKind } from "./rollout/kind.ts";

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
  hibernationScheduleKind as MachineKind,
  clusterSnapshotKind as MachineKind,
  clusterSnapshotScheduleKind as MachineKind,
  rolloutKind as MachineKind,
];

/** The kinds that build clusters, timed alike. */
const BUILDING_KINDS = ["Cluster", "EngineCluster", "EngineControlPlane"] as const;

/**
 * The engine's `kindSettings`: each kind's settings by its name, read by the kind itself; the built-in
 * kinds' typed (e.g. `{ Cluster: { pools: true }, ClusterRequest: { enabled: false } }`).
 */
export interface KindSettingsByName {
  readonly Cluster?: ClusterSettings;
  readonly ClusterRequest?: ClusterRequestSettings;
  readonly AccessRequest?: AccessRequestSettings;
  readonly EngineCluster?: CapiOwnedSettings;
  readonly EngineControlPlane?: CapiOwnedSettings;
  readonly ClusterSnapshot?: ClusterSnapshotSettings;
  readonly [kind: string]: KindSettings | undefined;
}

/** Settings timing the kinds that build clusters (Cluster, EngineCluster, EngineControlPlane) alike. */
export function buildingKindsTimed(timing: RequeueTiming): KindSettingsByName {
  return Object.fromEntries(BUILDING_KINDS.map((kind) => [kind, { timing: { ...timing } }]));
}

/** Settings serving Cluster API as an infrastructure provider (EngineClusters, EngineControlPlanes), or not. */
export function capiServed(enabled: boolean): KindSettingsByName {
  return { EngineCluster: { enabled }, EngineControlPlane: { enabled } };
}

/** Settings by kind name merged kind by kind, a later one winning field by field (its `timing` too). */
export function mergeKindSettings(...all: ReadonlyArray<KindSettingsByName | undefined>): KindSettingsByName {
  const merged: { [kind: string]: KindSettings } = {};
  for (const settings of all)
    for (const [kind, over] of Object.entries(settings ?? {}))
      merged[kind] = mergeSettings(merged[kind], over);
  return merged;
}
