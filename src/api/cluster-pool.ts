/** The ClusterPool kind (engine.openmcp.cloud/v1alpha1): warm clusters of one ProviderConfig, made before any Cluster asks. */

import type { ClusterTarget } from "./backend.ts";
import type { Condition, JsonObject, TypedObject } from "./common.ts";
import type { ENGINE_API_VERSION } from "./constants.ts";

/** How many idle clusters to keep, of which versions, from which ProviderConfig. */
export interface ClusterPoolSpec {
  /** The ProviderConfig whose backend makes the pool's clusters; a Cluster of a profile made from it may be served. */
  readonly providerConfig: string;
  /** Kubernetes versions (`X.Y.Z`) to keep idle clusters of; empty or absent: the config's default version. */
  readonly versions?: readonly string[];
  /** Idle clusters to keep Ready per version. 0 empties the pool. */
  readonly idle: number;
  /** At most this many pool clusters at once (idle, starting and being bound), across versions. Default idle × versions. */
  readonly maximum?: number;
  /** Make new idle clusters when some were taken (default true); false fills the pool once per spec change, then only serves. */
  readonly refill?: boolean;
  /**
   * A sleeping pool: of the idle clusters of each version, keep this many awake and the rest hibernated (backend
   * contract 1.6), woken when a Cluster takes one. At most `idle`; absent: every idle cluster awake.
   */
  readonly awake?: number;
}

/**
 * Where one pool cluster is. Hibernating, Hibernated and Waking: a sleeping pool's member on its way to sleep,
 * asleep, and starting again (the pool asked, or the Cluster that took it).
 */
export type PoolMemberPhase = "Provisioning" | "Ready" | "Failed" | "Hibernating" | "Hibernated" | "Waking";

/** The Cluster a pool cluster was claimed for. */
export interface PoolClaim {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One cluster of the pool, as the engine recorded it. */
export interface PoolMember {
  /** The backend's key of the cluster (not a Cluster's uid: it was made for none). */
  readonly id: string;
  readonly version: string;
  readonly phase: PoolMemberPhase;
  /**
   * The Cluster it is being bound to. Written before the backend binds it (guarded by the pool's
   * resourceVersion, so two Clusters never claim one member); removed once that Cluster holds it as its own.
   */
  readonly claimedBy?: PoolClaim;
}

/** What the pool holds now. */
export interface ClusterPoolStatus {
  readonly observedGeneration?: number;
  /** Clusters Ready (awake) and bound to nothing. */
  readonly idle?: number;
  /** A sleeping pool's idle clusters asleep (Hibernated). */
  readonly asleep?: number;
  /** A sleeping pool's idle clusters going to sleep. */
  readonly hibernating?: number;
  /** A sleeping pool's idle clusters being woken (to keep `spec.awake` awake). */
  readonly waking?: number;
  /** Clusters claimed by a Cluster, not yet bound at the backend. */
  readonly binding?: number;
  /** Clusters being made to refill the pool. */
  readonly refilling?: number;
  readonly members?: readonly PoolMember[];
  /**
   * `Ready` (the pool holds what its spec asks), `Refilled` (False with the reason when making clusters fails) and,
   * once `spec.awake` is set, `Hibernation` (False when the backend cannot sleep or a hibernate or wake failed).
   */
  readonly conditions?: readonly Condition[];
}

/** A pool of warm clusters. Cluster-scoped, like the ProviderConfig it draws from. */
export interface ClusterPool extends TypedObject<typeof ENGINE_API_VERSION, "ClusterPool"> {
  readonly spec: ClusterPoolSpec;
  readonly status?: ClusterPoolStatus;
}

/**
 * The target of a pool member's own cluster, keyed by its id (before it is bound to a Cluster); made from
 * `config` when the backend is to build it, bare when it is only looked at or deleted.
 */
export function poolMemberTarget(
  id: string,
  config: { readonly name: string; readonly settings?: JsonObject } = { name: "" },
): ClusterTarget {
  return {
    uid: id,
    namespace: "pool",
    name: id,
    tenancy: "Exclusive",
    profile: "",
    providerConfig: config.name,
    ...(config.settings ? { settings: config.settings } : {}),
  };
}
