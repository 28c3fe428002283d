/**
 * The ClusterRequestGrant kind (engine.openmcp.cloud/v1alpha1, namespaced): the scheduler's answer to one
 * ClusterRequest, with the same name and namespace. The source of truth when the request's status is lost.
 */

import type { ObjectReference, TypedObject } from "./common.ts";
import type { ENGINE_API_VERSION } from "./constants.ts";

/** What was granted. */
export interface ClusterRequestGrantSpec {
  /** UID of the ClusterRequest this answers (a request re-created under the same name is another request). */
  readonly requestUID: string;
  /** The granted Cluster. */
  readonly clusterRef: ObjectReference;
  /** Names the requester may use for cluster-scoped objects on a shared Cluster; empty on a dedicated one. */
  readonly prefix: string;
}

/** A granted ClusterRequest's answer. */
export interface ClusterRequestGrant extends TypedObject<typeof ENGINE_API_VERSION, "ClusterRequestGrant"> {
  readonly spec: ClusterRequestGrantSpec;
}
