/** The AccessRequest kind as the engine registers it: resource, machine, statechart, guards in words. */
import { CLUSTERS_API_VERSION, RESOURCES } from "../../api/constants.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { ACCESS_REQUEST_GUARD_PHRASES } from "./explain.ts";
import { accessRequestMachine } from "./machine.ts";

/** The AccessRequest kind. */
export const ACCESS_REQUEST_DEFINITION: MachineDefinition = {
  kind: "AccessRequest",
  apiVersion: CLUSTERS_API_VERSION,
  resource: RESOURCES.AccessRequest,
  names: ["accessrequest", "accessrequests", "ar", "areq"],
  machine: accessRequestMachine,
  statechart: { file: "accessRequest", source: "src/machines/access-request/machine.ts" },
  guardPhrases: ACCESS_REQUEST_GUARD_PHRASES,
};
