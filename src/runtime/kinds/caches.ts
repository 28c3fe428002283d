/**
 * Every cache of the built-in kinds by one name, for readers outside the kinds (the CLI, tests). Each
 * kind declares its own caches in its folder and reads them from there; nothing in the engine reads this.
 */

import { ACCESS_REQUEST_CACHES } from "./access-request/caches.ts";
import { CAPI_CACHES } from "./capi-owned/caches.ts";
import { CLUSTER_CACHES } from "./cluster/caches.ts";
import { CLUSTER_REQUEST_CACHES } from "./cluster-request/caches.ts";
import { ENGINE_CLUSTER_CACHES } from "./engine-cluster/caches.ts";
import { PROFILE_CACHES } from "./provider-config/caches.ts";

/** The built-in caches by the one name each is known by (`informers.of(CACHES.clusters)`). */
export const CACHES = {
  ...PROFILE_CACHES,
  ...CLUSTER_CACHES,
  ...ACCESS_REQUEST_CACHES,
  ...CLUSTER_REQUEST_CACHES,
  ...CAPI_CACHES,
  ...ENGINE_CLUSTER_CACHES,
} as const;
