/** The ClusterProfile kind (clusters.openmcp.cloud/v1alpha1): one offer of a cluster provider, cluster-scoped, without status. */

import type { LocalObjectReference, TypedObject } from "./common.ts";
import type { CLUSTERS_API_VERSION } from "./constants.ts";

/** One Kubernetes version a profile offers. */
export interface SupportedVersion {
  /** A full version, `X.Y.Z`. */
  readonly version: string;
  /** True when the version is still served but should no longer be chosen. */
  readonly deprecated?: boolean;
}

/** What a profile offers and who serves it. */
export interface ClusterProfileSpec {
  /** The provider serving the profile; `name` is its `--provider-name`. */
  readonly providerRef: LocalObjectReference;
  /** The configuration the profile came from; `name` is also used as a label value. */
  readonly providerConfigRef: LocalObjectReference;
  /** Offered Kubernetes versions; may be empty. */
  readonly supportedVersions: readonly SupportedVersion[];
}

/**
 * A kind of cluster a provider offers. Its name is free, but `<environment>.<provider-name>.<config-name>`
 * keeps providers from clashing.
 */
export interface ClusterProfile extends TypedObject<typeof CLUSTERS_API_VERSION, "ClusterProfile"> {
  /** The offer. */
  readonly spec: ClusterProfileSpec;
}
