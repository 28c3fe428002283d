/** The built-in backends by name; `--backend` picks one. */
import type { ClusterBackend } from "./backend.ts";
import { SimulatedBackend, type SimulatedBackendOptions } from "./simulated.ts";

/** Options every built-in backend may use. */
export interface BackendSettings {
  /** Folder where a backend keeps state that must outlive the process. */
  readonly stateDirectory?: string;
  readonly simulated?: Omit<SimulatedBackendOptions, "stateFile">;
}

const builtIns: Record<string, (settings: BackendSettings) => ClusterBackend> = {
  simulated: (settings) =>
    new SimulatedBackend({
      ...settings.simulated,
      ...(settings.stateDirectory ? { stateFile: `${settings.stateDirectory}/simulated.json` } : {}),
    }),
};

/** Names of the built-in backends. */
export const BUILT_IN_BACKENDS: readonly string[] = Object.keys(builtIns);

/** Creates the backend called `name`; an unknown name is an error that lists the known ones. */
export function createBackend(name: string, settings: BackendSettings = {}): ClusterBackend {
  const make = builtIns[name];
  if (!make) throw new Error(`unknown backend "${name}"; built-in backends: ${BUILT_IN_BACKENDS.join(", ")}`);
  return make(settings);
}
