/** The Cluster kind as the engine registers it: resource, machine, statechart, guards in words. */
import { RESOURCES } from "../../api/constants.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { CLUSTER_GUARD_PHRASES } from "./explain.ts";
import { clusterMachine } from "./machine.ts";

/** The Cluster kind. */
export const CLUSTER_DEFINITION = machineDefinition("Cluster", {
  resource: RESOURCES.Cluster,
  machine: clusterMachine,
  guardPhrases: CLUSTER_GUARD_PHRASES,
});
