/** Moved to kinds/provider-config/; kept for the importers in kinds/cluster until they import its caches from there. */
export { PROFILE_CACHES } from "./kinds/provider-config/caches.ts";
