/** The EngineControlPlane kind as the engine registers it: resource, machine, statechart, guards in words. */
import { CONTROLPLANE_API_VERSION, CONTROLPLANE_RESOURCES } from "../../api/engine-control-plane.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { ENGINE_CONTROL_PLANE_GUARD_PHRASES } from "./contract.ts";
import { engineControlPlaneMachine } from "./machine.ts";

/** The EngineControlPlane kind (Cluster API's ControlPlane, a managed control plane served by the engine's backends). */
export const ENGINE_CONTROL_PLANE_DEFINITION: MachineDefinition = {
  kind: "EngineControlPlane",
  apiVersion: CONTROLPLANE_API_VERSION,
  resource: CONTROLPLANE_RESOURCES.EngineControlPlane,
  names: ["enginecontrolplane", "enginecontrolplanes", "ecp"],
  machine: engineControlPlaneMachine,
  statechart: { file: "engineControlPlane", source: "src/machines/engine-control-plane/machine.ts" },
  guardPhrases: ENGINE_CONTROL_PLANE_GUARD_PHRASES,
};
