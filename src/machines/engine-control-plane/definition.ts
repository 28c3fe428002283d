/** The EngineControlPlane kind as the engine registers it: resource, machine, statechart, guards in words. */
import { CONTROLPLANE_RESOURCES } from "../../api/engine-control-plane.ts";
import { machineDefinition } from "../shared/machine-definition.ts";
import { ENGINE_CONTROL_PLANE_GUARD_PHRASES } from "./contract.ts";
import { engineControlPlaneMachine } from "./machine.ts";

/** The EngineControlPlane kind (Cluster API's ControlPlane, a managed control plane served by the engine's backends). */
export const ENGINE_CONTROL_PLANE_DEFINITION = machineDefinition("EngineControlPlane", {
  resource: CONTROLPLANE_RESOURCES.EngineControlPlane,
  shortNames: ["ecp"],
  machine: engineControlPlaneMachine,
  guardPhrases: ENGINE_CONTROL_PLANE_GUARD_PHRASES,
});
