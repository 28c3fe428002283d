/** The EngineCluster kind as the engine registers it: resource, machine, statechart, guards in words. */
import { RESOURCES } from "../../api/constants.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { ENGINE_CLUSTER_GUARD_PHRASES } from "./contract.ts";
import { engineClusterMachine } from "./machine.ts";

/** The EngineCluster kind (Cluster API's InfraCluster, served by the engine's backends). */
export const ENGINE_CLUSTER_DEFINITION = machineDefinition("EngineCluster", {
  resource: RESOURCES.EngineCluster,
  machine: engineClusterMachine,
  guardPhrases: ENGINE_CLUSTER_GUARD_PHRASES,
});
