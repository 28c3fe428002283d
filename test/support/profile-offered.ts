/** Waiting for a ClusterProfile the engine offers: it appears once the engine has read its ProviderConfig. */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type EventuallyOptions, eventually } from "./eventually.ts";

/** Waits until the ClusterProfile `name` exists and resolves to it. */
export const profileOffered = (
  custom: CustomObjectsApi,
  name: string,
  options: EventuallyOptions = {},
): Promise<ClusterProfile> =>
  eventually(
    async () =>
      (await custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name })) as ClusterProfile,
    { what: `ClusterProfile ${name}`, ...options },
  );
