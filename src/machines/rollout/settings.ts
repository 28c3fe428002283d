/**
 * Which settings a Cluster's backend target gets while a settings Rollout runs, pure: the one decision the runtime
 * asks for every Cluster (src/runtime/kinds/shared/cluster-settings.ts), and the hash that says which settings a
 * Cluster runs without showing them.
 *
 * Flow: a run reaches a Cluster by writing the annotation `settings-from-rollout: <name>/<uid>` on it; from then on
 * its target's settings are the run's patch merged over its ProviderConfig's, and its backend sees the difference
 * (outOfDate) and updates it once. When the last stage is done the run writes the same merge into the config and
 * says so in its status (`settings.appliedAt`); from then on the config's own settings are used, which are equal,
 * so no Cluster is updated again.
 * Guarantees: a Cluster not reached keeps the config's settings; one reached keeps the run's while the run exists,
 * halted or aborted too (settings are not taken back behind a person's back); deleting the run takes them back.
 */
import { createHash } from "node:crypto";
import type { Cluster } from "../../api/cluster.ts";
import type { JsonObject, JsonValue } from "../../api/common.ts";
import { SETTINGS_FROM_ROLLOUT_ANNOTATION } from "../../api/constants/rollout.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import type { Rollout } from "../../api/rollout.ts";

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `patch` merged over `base` as RFC 7386 says: objects merge key by key, `null` removes, anything else replaces. */
export function mergeSettings(base: JsonObject | undefined, patch: JsonObject): JsonObject {
  const merged: Record<string, JsonValue> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (isObject(value)) merged[key] = mergeSettings(isObject(merged[key]) ? merged[key] : {}, value);
    else merged[key] = value;
  }
  return merged;
}

/** The same JSON with object keys sorted, so equal settings give equal text. */
function canonical(value: JsonValue | undefined): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(",")}}`;
  return JSON.stringify(value ?? null);
}

/** A short hash of settings (absent and empty are the same): shown and compared instead of the values. */
export function settingsHash(settings: JsonObject | undefined): string {
  const text = canonical(settings && Object.keys(settings).length > 0 ? settings : {});
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

/** `<name>/<uid>` of a rollout, as the annotations name it. */
export const runName = (rollout: Rollout): string => `${rollout.metadata.name}/${rollout.metadata.uid}`;

/** Whether `rollout` still decides the settings of the Clusters it reached: a settings run not yet applied. */
function holdsItsClusters(rollout: Rollout, config: string): boolean {
  return (
    rollout.spec.settings?.providerConfig === config &&
    rollout.status?.settings?.appliedAt === undefined &&
    rollout.metadata.deletionTimestamp === undefined
  );
}

/**
 * The settings `cluster`'s backend target gets, its ProviderConfig being `config`: the config's own, or — for a
 * Cluster a settings run of its namespace reached and that run not yet applied to the config — the run's patch
 * merged over them. `rollouts` are the Rollouts known (any namespace; the Cluster's annotation picks one by uid).
 */
export function clusterSettings(
  cluster: Cluster,
  config: ProviderConfig | undefined,
  rollouts: readonly Rollout[],
): JsonObject | undefined {
  const own = config?.spec.settings;
  const named = cluster.metadata.annotations?.[SETTINGS_FROM_ROLLOUT_ANNOTATION];
  if (!named || !config) return own;
  const run = rollouts.find(
    (rollout) => rollout.metadata.namespace === cluster.metadata.namespace && runName(rollout) === named,
  );
  const patch = run?.spec.settings?.patch;
  return run && patch && holdsItsClusters(run, config.metadata.name ?? "") ? mergeSettings(own, patch) : own;
}
