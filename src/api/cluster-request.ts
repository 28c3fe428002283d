/** The ClusterRequest kind (clusters.openmcp.cloud/v1alpha1): a request for a cluster with a purpose, answered by the scheduler. */

import type { CommonStatus, ObjectReference, TypedObject } from "./common.ts";
import type { CLUSTERS_API_VERSION, REQUEST_PHASES } from "./constants.ts";

/** A phase of a request object (ClusterRequest or AccessRequest). */
export type RequestPhase = (typeof REQUEST_PHASES)[keyof typeof REQUEST_PHASES];

/** What is requested; immutable as a whole. */
export interface ClusterRequestSpec {
  /** What the cluster will be used for. */
  readonly purpose: string;
  /** When true, deleting the request waits until its Cluster is gone. */
  readonly waitForClusterDeletion?: boolean;
}

/** How the scheduler answered. */
export interface ClusterRequestStatus extends CommonStatus<RequestPhase> {
  /** The granted Cluster; immutable and never removed once set. */
  readonly cluster?: ObjectReference;
}

/** A request for a cluster that fits a purpose. */
export interface ClusterRequest extends TypedObject<typeof CLUSTERS_API_VERSION, "ClusterRequest"> {
  /** What is requested. */
  readonly spec: ClusterRequestSpec;
  /** The answer; absent until the scheduler first writes it. */
  readonly status?: ClusterRequestStatus;
}
