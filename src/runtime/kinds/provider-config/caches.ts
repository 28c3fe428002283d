/** The caches of the ProviderConfig kind: what profiles are made of and made as; the kinds that build clusters read them too. */
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import { resourceCache } from "../../informers.ts";

export const PROFILE_CACHES = {
  profiles: resourceCache<ClusterProfile>("ClusterProfile"),
  providerConfigs: resourceCache<ProviderConfig>("ProviderConfig"),
} as const;
