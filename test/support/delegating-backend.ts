/**
 * A backend that hands its cluster lifecycle to another: for tests that want the simulated backend under another
 * name or capabilities, without its handover (export, import) or with an admin access of their own.
 */
import type { ClusterBackend } from "../../src/api/backend-contract.ts";

/** `inner`'s versions, traits, observe, create, update and delete as `name`; no admin access, nothing else. */
export function delegatingBackend(
  inner: ClusterBackend,
  name: string,
  capabilities: ClusterBackend["capabilities"],
): ClusterBackend {
  return {
    name,
    capabilities,
    supportedVersions: (config) => inner.supportedVersions(config),
    traits: (config) => inner.traits(config),
    observe: (target) => inner.observe(target),
    create: (target, version) => inner.create(target, version),
    update: (target, version) => inner.update(target, version),
    delete: (target) => inner.delete(target),
    adminAccess: async () => undefined,
  };
}
