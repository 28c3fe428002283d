/** The EngineCluster kind as the engine registers it: resource, machine, statechart, guards in words. */
import { INFRASTRUCTURE_API_VERSION, RESOURCES } from "../../api/constants.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { ENGINE_CLUSTER_GUARD_PHRASES } from "./contract.ts";
import { engineClusterMachine } from "./machine.ts";

/** The EngineCluster kind (Cluster API's InfraCluster, served by the engine's backends). */
export const ENGINE_CLUSTER_DEFINITION: MachineDefinition = {
  kind: "EngineCluster",
  apiVersion: INFRASTRUCTURE_API_VERSION,
  resource: RESOURCES.EngineCluster,
  names: ["enginecluster", "engineclusters"],
  machine: engineClusterMachine,
  statechart: { file: "engineCluster", source: "src/machines/engine-cluster/machine.ts" },
  guardPhrases: ENGINE_CLUSTER_GUARD_PHRASES,
};
