/** Which provider a ProviderConfig belongs to, as one engine sees it: its own, free to claim, or another's. Pure. */
import type { ProviderConfig } from "../../api/provider-config.ts";
import { Patch, type PatchOperation } from "../shared/json-patch.ts";
import type { ProfileOwner } from "./profile.ts";

/**
 * How an engine stands to a ProviderConfig:
 * - `ours`: `spec.providerRef.name` is this engine's provider name; it serves the config (or says why not).
 * - `claimable`: the config names no provider and its backend is one this engine runs; the engine
 *   claims it (sets `spec.providerRef`), then it is `ours`.
 * - `foreign`: it names another provider, or names none and needs another backend; no write at all.
 */
export type ConfigOwnership = "ours" | "claimable" | "foreign";

/**
 * Decides {@link ConfigOwnership}. An explicit `providerRef` settles it whatever the backend: a config that
 * names us but another backend is ours to report on. Without one only the backend can tell, and two
 * engines with the same backend may both find it claimable: the API server lets one claim win (the claim
 * is guarded by the resourceVersion and `providerRef` is immutable once set), the other then sees it foreign.
 */
export function configOwnership(config: ProviderConfig, owner: ProfileOwner): ConfigOwnership {
  const claimedBy = config.spec.providerRef?.name;
  if (claimedBy !== undefined) return claimedBy === owner.providerName ? "ours" : "foreign";
  return owner.backends.includes(config.spec.backend) ? "claimable" : "foreign";
}

/** The operations that claim a config without a provider for `owner` (only meaningful when `claimable`). */
export function claimOperations(owner: ProfileOwner): PatchOperation[] {
  return [Patch.add(["spec", "providerRef"], { name: owner.providerName })];
}
