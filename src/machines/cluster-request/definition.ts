/** The ClusterRequest kind as the engine registers it: resource, machine, statechart, guards in words. */
import { RESOURCES } from "../../api/constants.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { CLUSTER_REQUEST_GUARD_PHRASES } from "./explain.ts";
import { clusterRequestMachine } from "./machine.ts";

/** The ClusterRequest kind. */
export const CLUSTER_REQUEST_DEFINITION = machineDefinition("ClusterRequest", {
  resource: RESOURCES.ClusterRequest,
  shortNames: ["cr", "creq"],
  machine: clusterRequestMachine,
  guardPhrases: CLUSTER_REQUEST_GUARD_PHRASES,
});
