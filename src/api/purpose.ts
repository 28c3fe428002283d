/** The Purpose kind (engine.openmcp.cloud/v1alpha1, cluster-scoped): what a ClusterRequest's purpose implies (design record, seed 002). */

import type { TypedObject } from "./common.ts";
import type { ENGINE_API_VERSION } from "./constants.ts";

/**
 * One wish about a trait of the cluster: exactly one of `trait` and `anyOf` (equivalent traits of
 * different providers; any one of them will do).
 */
export interface TraitRequest {
  /** The trait, e.g. `cluster.openmcp.cloud/workerless`. */
  readonly trait?: string;
  /** Equivalent traits: the wish holds when the cluster has any of them. */
  readonly anyOf?: readonly string[];
  /** Preferred, not required: a cluster without it is still acceptable (default false). */
  readonly optional?: boolean;
  /** The cluster must NOT have it (default false). */
  readonly negated?: boolean;
}

/** What a purpose means for scheduling. */
export interface PurposeSpec {
  /** Requests with this purpose get a cluster of their own (unless the request says otherwise). */
  readonly dedicated?: boolean;
  /** Traits requests with this purpose wish for. */
  readonly traits?: readonly TraitRequest[];
}

/** A purpose as a resource: its name is the purpose (`spec.purpose` of a ClusterRequest). */
export interface Purpose extends TypedObject<typeof ENGINE_API_VERSION, "Purpose"> {
  readonly spec: PurposeSpec;
}
