/** The Rollout kind as the engine registers it: resource, machine, statechart, guards in words. */
import { ROLLOUT_API_VERSION, ROLLOUT_KIND, ROLLOUT_RESOURCE } from "../../api/constants/rollout.ts";
import type { Rollout } from "../../api/rollout.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { MachineDefinition } from "../shared/machine-definition.ts";
import { rolloutMachine } from "./machine.ts";

/** The Rollout kind. */
export const ROLLOUT_DEFINITION: MachineDefinition = {
  kind: ROLLOUT_KIND,
  apiVersion: ROLLOUT_API_VERSION,
  resource: ROLLOUT_RESOURCE,
  names: ["rollout", "rollouts", "ro"],
  machine: rolloutMachine,
  statechart: { file: "rollout", source: "src/machines/rollout/machine.ts" },
  guardPhrases: {
    isAborted: "spec.abort is true",
    isStartable:
      "gates.notBefore has passed (or there is none), and a settings run's ProviderConfig exists and its backend takes the settings",
    hasFailure: "a target failed at the new version or timed out",
    isComplete:
      "every target is done or skipped (a settings run: and its ProviderConfig holds the new settings)",
    hasSettingsToApply: "every target runs the new settings; its ProviderConfig does not hold them yet",
    isSettingsApplied: "its ProviderConfig holds the new settings",
    isSettingsNotApplied: "its ProviderConfig does not hold the new settings yet",
    isPaused: "spec.paused is true",
    isResumed: "spec.paused is false",
    hasChanges:
      "the current stage's gates and preflight checks passed and maxUnavailable leaves room for more Clusters",
    needsSnapshots:
      "snapshots.beforeChange: a Cluster of the current stage still to ask has no snapshot of this run yet",
  },
};

/** A rollout explained from what it stores. */
export function explainRollout(rollout: Rollout): Explanation {
  const status = rollout.status;
  const why = (status?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`);
  const settings = status?.settings;
  if (settings)
    why.push(
      `settings of ProviderConfig ${settings.providerConfig}: ${settings.from} → ${settings.to}${settings.appliedAt ? `, given to the config at ${settings.appliedAt}` : ", the config keeps its own until the last stage is done"}`,
    );
  for (const stage of status?.stages ?? [])
    why.push(
      `stage ${stage.name}: ${stage.done}/${stage.targets} done, ${stage.changing} changing, ${stage.failed} failed, ${stage.skipped} skipped`,
    );
  const ready = status?.conditions?.find((c) => c.type === "Ready");
  const waitingFor = ready && ready.status === "False" ? [ready.message] : [];
  return { state: status?.state, phase: status?.phase, why, waitingFor };
}
