/** The interface a provider backend implements: the engine's only way to touch infrastructure. */
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { ProviderConfig } from "../api/provider-config.ts";

/**
 * A provider backend. The engine calls it only from its runtime, never from the machines, and never
 * for a Cluster that belongs to another provider.
 *
 * Contract (the same for every backend):
 * - `observe` only reads. It reports `{ exists: false }` for a cluster it does not hold.
 * - `create`, `update` and `delete` are idempotent: calling one twice, or after a restart of the
 *   controller, has the effect of calling it once. `create` never makes a second cluster for one
 *   Cluster object (keyed by `target.uid`); `delete` of an absent cluster succeeds.
 * - Commands may return before the work is done; `observe` tells when it is (`ready`, or absent after
 *   a delete). A command that cannot succeed throws an Error whose message a person can act on.
 * - No secret (kubeconfig, token) ever appears in an observation.
 */
export interface ClusterBackend {
  /** Short name used in logs and the Info column, e.g. `simulated`. */
  readonly name: string;
  /** The versions a ClusterProfile made from `config` offers (a subset of what the config asks for). */
  supportedVersions(config: ProviderConfig): readonly SupportedVersion[];
  observe(target: ClusterTarget): Promise<ClusterObservation>;
  create(target: ClusterTarget, version: string): Promise<void>;
  update(target: ClusterTarget, version: string): Promise<void>;
  delete(target: ClusterTarget): Promise<void>;
  /** Releases resources (files, connections) at shutdown. */
  close?(): Promise<void>;
}
