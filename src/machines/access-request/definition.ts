/** The AccessRequest kind as the engine registers it: resource, machine, statechart, guards in words. */
import { RESOURCES } from "../../api/constants.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { ACCESS_REQUEST_GUARD_PHRASES } from "./explain.ts";
import { accessRequestMachine } from "./machine.ts";

/** The AccessRequest kind. */
export const ACCESS_REQUEST_DEFINITION = machineDefinition("AccessRequest", {
  resource: RESOURCES.AccessRequest,
  shortNames: ["ar", "areq"],
  machine: accessRequestMachine,
  guardPhrases: ACCESS_REQUEST_GUARD_PHRASES,
});
