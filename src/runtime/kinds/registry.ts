/**
 * Every machine-backed kind the engine drives, one entry each. The list feeds the caches and
 * controllers of the engine, the statechart export, `explain` and the live view: adding a kind is a
 * folder in `src/machines` and one entry here (see docs/add-a-kind.md).
 */
import type { MachineKind } from "../machine-kind.ts";
import { accessRequestKind } from "./access-request.ts";
import { clusterKind } from "./cluster.ts";
import { clusterRequestKind } from "./cluster-request.ts";
import { engineClusterKind } from "./engine-cluster.ts";
import { engineControlPlaneKind } from "./engine-control-plane.ts";

/** The built-in kinds, in the order they are shown; each says itself whether an engine drives it (`enabled`). */
export const MACHINE_KINDS: readonly MachineKind[] = [
  clusterKind as MachineKind,
  clusterRequestKind as MachineKind,
  accessRequestKind as MachineKind,
  engineClusterKind as MachineKind,
  engineControlPlaneKind as MachineKind,
];
