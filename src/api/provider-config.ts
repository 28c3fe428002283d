/** The ProviderConfig kind (engine.openmcp.cloud/v1alpha1): the engine's own configuration of one offer, yielding one ClusterProfile. */

import type { SupportedVersion } from "./cluster-profile.ts";
import type { Condition, JsonObject, TypedObject } from "./common.ts";
import type { ENGINE_API_VERSION } from "./constants.ts";

/** The provider a ProviderConfig belongs to. */
export interface ProviderReference {
  /** The provider's `--provider-name`. */
  readonly name: string;
}

/** The backend, its settings and what the resulting profile offers. */
export interface ProviderConfigSpec {
  /**
   * The provider this configuration belongs to: only the engine running with this `--provider-name` writes
   * the config or makes a profile of it. May be set once (an engine whose backend matches sets it on a
   * config that has none: it claims it), never changed or removed.
   */
  readonly providerRef?: ProviderReference;
  /**
   * The name of the ClusterProfile this configuration publishes (a DNS-1123 subdomain), e.g. `kind`, as
   * openMCP's own providers name theirs; absent: `<environment>.<provider-name>.<config-name>`. Set at
   * creation or never, and never changed: a Cluster's profile is immutable, so renaming would orphan them.
   */
  readonly profileName?: string;
  /** A built-in backend name (`simulated`, `local`, `existing`, `kind`) or a module specifier; immutable. */
  readonly backend: string;
  /** Backend-specific settings, passed to the backend as written. */
  readonly settings?: JsonObject;
  /** Offered versions (`X.Y.Z`, unique), copied into the profile. */
  readonly supportedVersions?: readonly SupportedVersion[];
  /** Version for Clusters that ask for none; a non-deprecated entry of `supportedVersions`. */
  readonly defaultVersion?: string;
  /** Properties of the clusters this configuration makes. */
  readonly traits?: readonly string[];
}

/** What the engine last made of a ProviderConfig. */
export interface ProviderConfigStatus {
  /** The `metadata.generation` this status was computed for. */
  readonly observedGeneration?: number;
  /** Name of the generated ClusterProfile: `spec.profileName`, else `<environment>.<provider-name>.<config-name>`. */
  readonly profileName?: string;
  /** Individual observations, at most one per type. */
  readonly conditions?: readonly Condition[];
  /** The warm pools of this configuration by name, as their controller last saw them (it alone writes this). */
  readonly pools?: Readonly<Record<string, ProviderConfigPool>>;
}

/** One warm pool as its ProviderConfig shows it. */
export interface ProviderConfigPool {
  readonly idle: number;
  readonly binding: number;
  readonly refilling: number;
  /** A sleeping pool's idle clusters asleep, going to sleep or waking; absent when it keeps all awake. */
  readonly asleep?: number;
  /** The pool's Ready condition: it holds what its spec asks. */
  readonly ready: boolean;
  /** Why not, or why refilling fails. */
  readonly message?: string;
}

/**
 * One configuration of the engine's cluster provider. Cluster-scoped; its name (a valid label value) is its
 * ClusterProfile's `providerConfigRef.name` and, unless `spec.profileName` names the profile, the config-name
 * part of the profile's name.
 */
export interface ProviderConfig extends TypedObject<typeof ENGINE_API_VERSION, "ProviderConfig"> {
  /** The configuration. */
  readonly spec: ProviderConfigSpec;
  /** Observed state; absent until the engine first writes it. */
  readonly status?: ProviderConfigStatus;
}
