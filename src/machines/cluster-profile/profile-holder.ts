/**
 * Who holds the ClusterProfile a ProviderConfig would publish: nobody, the config itself, or someone else
 * (another provider, or another ProviderConfig of this provider). Pure.
 */
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import { PROVIDER_CONFIG_LABELS } from "../../api/constants/provider-config.ts";
import { LABELS } from "../../api/constants.ts";

/**
 * - `free`: no such profile; the config may create it.
 * - `ours`: this provider's profile for this config (by its providerRef, labels and providerConfigRef);
 *   kept in step with the config.
 * - `provider`: another provider's (its `spec.providerRef` or `clusters.openmcp.cloud/provider` label).
 * - `config`: this provider's, made for another ProviderConfig (its `engine.openmcp.cloud/provider-config`
 *   label, else its `spec.providerConfigRef`): the first config to hold a name keeps it.
 * The last two are taken: the config writes no profile and says so.
 */
export type ProfileHolder =
  | { readonly kind: "free" }
  | { readonly kind: "ours" }
  | { readonly kind: "provider"; readonly provider: string }
  | { readonly kind: "config"; readonly config: string };

/** Decides {@link ProfileHolder} from the stored profile (undefined: none), for config `configName` of provider `providerName`. */
export function profileHolder(
  stored: ClusterProfile | undefined,
  configName: string,
  providerName: string,
): ProfileHolder {
  if (!stored) return { kind: "free" };
  const labels = stored.metadata.labels ?? {};
  const referenced = stored.spec.providerRef.name;
  if (referenced !== providerName) return { kind: "provider", provider: referenced };
  const labelled = labels[LABELS.provider];
  if (labelled !== undefined && labelled !== providerName) return { kind: "provider", provider: labelled };
  const config = labels[PROVIDER_CONFIG_LABELS.providerConfig] ?? stored.spec.providerConfigRef.name;
  return config === configName ? { kind: "ours" } : { kind: "config", config };
}

/** Whether the holder keeps the config from writing the profile. */
export function profileTaken(
  holder: ProfileHolder,
): holder is Extract<ProfileHolder, { kind: "provider" | "config" }> {
  return holder.kind === "provider" || holder.kind === "config";
}

/** The Ready condition's message of a config whose profile `name` is taken: who holds it, and what to do. */
export function profileTakenMessage(
  name: string,
  holder: Extract<ProfileHolder, { kind: "provider" | "config" }>,
): string {
  const rename =
    "create a ProviderConfig with another spec.profileName instead (the field cannot be changed once set)";
  return holder.kind === "provider"
    ? `ClusterProfile ${name} belongs to provider "${holder.provider}", so this config publishes no profile; ${rename}, or remove that provider's profile`
    : `ClusterProfile ${name} is held by ProviderConfig "${holder.config}" of this provider, so this config publishes no profile; delete ProviderConfig "${holder.config}" to hand the profile over, or ${rename}`;
}
