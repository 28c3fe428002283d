/** Constants of the ProviderConfig kind: the label and annotation it puts on what it makes, its reasons, its CEL messages. */

import { ENGINE_GROUP } from "../constants.ts";

/** Labels a ProviderConfig puts on what it makes. */
export const PROVIDER_CONFIG_LABELS = {
  /** The ProviderConfig a generated ClusterProfile came from. */
  providerConfig: `${ENGINE_GROUP}/provider-config`,
} as const;

/** Annotations on a ProviderConfig. */
export const PROVIDER_CONFIG_ANNOTATIONS = {
  /** On a ProviderConfig the engine made itself: who made it (`init`, the default configuration). */
  madeBy: `${ENGINE_GROUP}/made-by`,
} as const;

/** Reasons of a ProviderConfig's conditions and Events beyond the shared ones. */
export const PROVIDER_CONFIG_REASONS = {
  /**
   * ProviderConfig: the ClusterProfile it would publish exists and is another's (another provider's, or
   * another ProviderConfig's of this provider); no profile is written.
   */
  ProfileNameTaken: "ProfileNameTaken",
} as const;

/** Messages of the CEL rules of the ProviderConfig CRD (all ours), exactly as the API server reports them. */
export const PROVIDER_CONFIG_VALIDATION_MESSAGES = {
  /** ProviderConfig: its name becomes a ClusterProfile's providerConfigRef.name (ours). */
  providerConfigNameLabelValue:
    "the name of a ProviderConfig must be a valid label value (at most 63 characters), because it becomes the providerConfigRef.name of its ClusterProfile",
  /** ProviderConfig: `spec.backend` may not change (ours). */
  backendImmutable: "backend is immutable; create a new ProviderConfig to move to another backend",
  /** ProviderConfig: `spec.providerRef` may be set once, never changed or removed (ours). */
  providerRefImmutable:
    "providerRef is immutable once set: the clusters of this config belong to that provider; create a new ProviderConfig for another provider",
  /** ProviderConfig: `spec.profileName` is given at creation or never, and never changed or removed (ours). */
  profileNameImmutable:
    "profileName is given at creation or never, and never changed or removed: a Cluster's profile is immutable, so renaming the ClusterProfile would orphan the Clusters that name it; create a new ProviderConfig for another profile name",
  /** ProviderConfig: the default version must be offered and current (ours). */
  defaultVersionSupported: "defaultVersion must be a non-deprecated entry of spec.supportedVersions",
} as const;
