/** The ClusterRequest kind as the engine registers it: resource, machine, statechart, guards in words. */
import { CLUSTERS_API_VERSION, RESOURCES } from "../../api/constants.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { CLUSTER_REQUEST_GUARD_PHRASES } from "./explain.ts";
import { clusterRequestMachine } from "./machine.ts";

/** The ClusterRequest kind. */
export const CLUSTER_REQUEST_DEFINITION: MachineDefinition = {
  kind: "ClusterRequest",
  apiVersion: CLUSTERS_API_VERSION,
  resource: RESOURCES.ClusterRequest,
  names: ["clusterrequest", "clusterrequests", "cr", "creq"],
  machine: clusterRequestMachine,
  statechart: { file: "clusterRequest", source: "src/machines/cluster-request/machine.ts" },
  guardPhrases: CLUSTER_REQUEST_GUARD_PHRASES,
};
