/** The Cluster kind as the engine registers it: resource, machine, statechart, guards in words. */
import { CLUSTERS_API_VERSION, RESOURCES } from "../../api/constants.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { CLUSTER_GUARD_PHRASES } from "./explain.ts";
import { clusterMachine } from "./machine.ts";

/** The Cluster kind. */
export const CLUSTER_DEFINITION: MachineDefinition = {
  kind: "Cluster",
  apiVersion: CLUSTERS_API_VERSION,
  resource: RESOURCES.Cluster,
  names: ["cluster", "clusters"],
  machine: clusterMachine,
  statechart: { file: "cluster", source: "src/machines/cluster/machine.ts" },
  guardPhrases: CLUSTER_GUARD_PHRASES,
};
