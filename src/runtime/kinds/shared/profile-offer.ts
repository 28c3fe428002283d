/** What a ClusterProfile offers a kind that builds clusters from it: the profile, its config's settings and default version. */

import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { JsonObject } from "../../../api/common.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import { profileName, type UnpublishedProfile } from "../../../machines/cluster-profile/profile.ts";
import type { ProfileClaimant } from "../../../machines/cluster-profile/profile-reference.ts";
import { clusterSettings } from "../../../machines/rollout/settings.ts";
import type { KindContext } from "../../machine-kind.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { ROLLOUTS } from "../rollout/caches.ts";

/** A profile as the caches know it; every field undefined when the profile does not exist (yet). */
export interface ProfileOffer {
  readonly profile: ClusterProfile | undefined;
  /** `spec.settings` of the profile's ProviderConfig, handed to the backend with every command. */
  readonly settings: JsonObject | undefined;
  /** `spec.defaultVersion` of that ProviderConfig, for objects that name no version. */
  readonly defaultVersion: string | undefined;
}

/**
 * Looks up profile `name` and its ProviderConfig in the caches. With `cluster`, the settings are that Cluster's:
 * the one place deciding them, where a settings Rollout that reached it puts its patch over the config's (see
 * src/machines/rollout/settings.ts; no Rollouts are known while the Rollout kind is off).
 */
export function profileOffer(context: KindContext, name: string, cluster?: Cluster): ProfileOffer {
  const profile = context.informers.of(PROFILE_CACHES.profiles).get(name);
  const config = profile
    ? context.informers.of(PROFILE_CACHES.providerConfigs).get(profile.spec.providerConfigRef.name)
    : undefined;
  const settings = cluster
    ? clusterSettings(cluster, config, context.informers.declared(ROLLOUTS)?.list() ?? [])
    : config?.spec.settings;
  return { profile, settings, defaultVersion: config?.spec.defaultVersion };
}

/**
 * The ProviderConfig of ours that would publish profile `name` but says it cannot (its Ready condition False),
 * so that an object naming the missing profile points at the config to fix; undefined when there is none.
 */
export function unpublishedProfile(context: KindContext, name: string): UnpublishedProfile | undefined {
  for (const config of context.informers.of(PROFILE_CACHES.providerConfigs).list()) {
    if (config.spec.providerRef?.name !== context.providerName || profileName(context, config) !== name)
      continue;
    const ready = config.status?.conditions?.find((condition) => condition.type === "Ready");
    if (ready?.status === "False") {
      return { config: config.metadata.name ?? "", reason: ready.reason, message: ready.message };
    }
  }
  return undefined;
}

/** Names of the profiles made from `config`: a change of the config changes what their clusters are built with. */
export function profilesOf(context: KindContext, config: ProviderConfig): Set<string> {
  return new Set(
    context.informers
      .of(PROFILE_CACHES.profiles)
      .list()
      .filter((profile) => profile.spec.providerConfigRef.name === config.metadata?.name)
      .map((profile) => profile.metadata.name ?? ""),
  );
}

/**
 * This engine as the claimant of profiles (see profile-reference.ts): its provider name and environment, and
 * the profile names its ProviderConfigs (`spec.providerRef.name` is ours) give in `spec.profileName`, from
 * the cache. Every kind that decides whether an object naming a profile is ours builds its claimant here.
 */
export function profileClaimant(context: KindContext): ProfileClaimant {
  const claimedProfiles = new Set<string>();
  for (const config of context.informers.of(PROFILE_CACHES.providerConfigs).list()) {
    const name = config.spec.profileName;
    if (name !== undefined && config.spec.providerRef?.name === context.providerName)
      claimedProfiles.add(name);
  }
  return { providerName: context.providerName, environment: context.environment, claimedProfiles };
}

/** Names of this provider's profiles, sorted: what an object naming a missing one could name instead. */
export function ourProfiles(context: KindContext): string[] {
  return context.informers
    .of(PROFILE_CACHES.profiles)
    .list()
    .filter((profile) => profile.spec.providerRef.name === context.providerName)
    .map((profile) => profile.metadata.name ?? "")
    .sort();
}
