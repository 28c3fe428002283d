/**
 * The ClusterConfig kind (gardener.clusters.openmcp.cloud/v1alpha1, namespaced), as openMCP's Gardener provider
 * defines it: Shoot extensions, resource references and JSON patches that a Cluster naming it in
 * `spec.clusterConfigs` gets on its Shoot.
 */

import type { JsonObject, JsonValue, TypedObject } from "./common.ts";
import type { GARDENER_CLUSTERS_API_VERSION } from "./constants.ts";

/** One RFC 6902 operation on the Shoot manifest (`metadata` and `spec`). */
export interface ClusterConfigPatch {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  /** A JSON pointer (RFC 6901) into the Shoot, e.g. `/spec/purpose`. */
  readonly path: string;
  /** For `add`, `replace` and `test`: any JSON. */
  readonly value?: JsonValue;
  /** For `move` and `copy`: a JSON pointer. */
  readonly from?: string;
}

/** How `patches` treat a path that is not there. */
export interface ClusterConfigPatchOptions {
  /** A `remove` of a path that does not exist does nothing (default false: an error). */
  readonly ignoreMissingOnRemove?: boolean;
  /** An `add` creates missing parent objects (default false: an error). */
  readonly createMissingOnAdd?: boolean;
}

/** A Gardener Shoot extension (`shoot.spec.extensions[]`), keyed by `type`. */
export interface ShootExtension {
  readonly type: string;
  readonly providerConfig?: JsonObject;
  readonly disabled?: boolean;
}

/** A named resource reference (`shoot.spec.resources[]`), keyed by `name`. */
export interface ShootResourceReference {
  readonly name: string;
  readonly resourceRef: { readonly apiVersion?: string; readonly kind: string; readonly name: string };
}

/** What a ClusterConfig adds to a Shoot: extensions (by type), resources (by name), then patches in order. */
export interface ClusterConfigSpec {
  readonly extensions?: readonly ShootExtension[];
  readonly resources?: readonly ShootResourceReference[];
  readonly patches?: readonly ClusterConfigPatch[];
  readonly patchOptions?: ClusterConfigPatchOptions;
}

/** Provider-specific configuration a Cluster names in `spec.clusterConfigs` (same namespace). */
export interface ClusterConfig extends TypedObject<typeof GARDENER_CLUSTERS_API_VERSION, "ClusterConfig"> {
  readonly spec?: ClusterConfigSpec;
}
