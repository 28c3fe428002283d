/** What a move between management clusters (`openmcp-engine move`) leaves on objects, for the engines on both sides to read. */
import { ENGINE_GROUP } from "./constants.ts";

/**
 * `"true"` on an object: no engine reconciles it (no backend command, no status or finalizer write, no token
 * renewal); it only tells so in an Event. Like Cluster API's `cluster.x-k8s.io/paused`: `move` sets it on
 * the source before copying and takes it off on the target once everything is there.
 */
export const PAUSED_ANNOTATION = `${ENGINE_GROUP}/paused`;

/**
 * The uid of the object's first incarnation, set by `move` on the copy (a copy gets a new `metadata.uid`):
 * what backends key a Cluster by and what an AccessRequest's objects on its cluster are named and labelled
 * after, so both stay the same across moves.
 */
export const IDENTITY_ANNOTATION = `${ENGINE_GROUP}/identity`;

/**
 * On a Cluster copied by `move`: the name of the hand-over Secret beside it, whose backend state the engine on
 * the target imports (once, before it first reconciles the Cluster) and then deletes, with this annotation.
 */
export const HANDOVER_ANNOTATION = `${ENGINE_GROUP}/handover`;

/** The label on a hand-over Secret: the `metadata.uid` of the Cluster it was made for (the Secret's owner). */
export const HANDOVER_OWNER_LABEL = `${ENGINE_GROUP}/handover-of`;

/**
 * On a hand-over Secret: `ready` (its data is the backend's state of the cluster, see
 * `ClusterBackend.exportCluster`) or `refused` (the backend cannot hand its clusters over; {@link HANDOVER_MESSAGE_ANNOTATION} says why).
 */
export const HANDOVER_STATE_ANNOTATION = `${ENGINE_GROUP}/handover-state`;

/** On a refused hand-over Secret: why, for a person. */
export const HANDOVER_MESSAGE_ANNOTATION = `${ENGINE_GROUP}/handover-message`;

/** The name of the hand-over Secret of Cluster `name` (in the Cluster's namespace). */
export function handoverSecretName(clusterName: string): string {
  return `${clusterName}-handover`;
}

/** Whether `move` paused the object. */
export function isPaused(object: {
  readonly metadata: { readonly annotations?: Readonly<Record<string, string>> };
}): boolean {
  return object.metadata.annotations?.[PAUSED_ANNOTATION] === "true";
}

/**
 * Whether a Cluster is between engines: paused for a move, or a copy whose hand-over this engine has not imported
 * yet. Its backend cannot answer for it then, so what uses it (its AccessRequests) waits rather than reads it as
 * unreachable; the Cluster's change wakes them.
 */
export function inTransit(cluster: {
  readonly metadata: { readonly annotations?: Readonly<Record<string, string>> };
}): boolean {
  return isPaused(cluster) || cluster.metadata.annotations?.[HANDOVER_ANNOTATION] !== undefined;
}

/** The uid names and backend keys derive from: the first incarnation's (see {@link IDENTITY_ANNOTATION}), else the object's own. */
export function identityUid(metadata: {
  readonly uid?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}): string {
  return metadata.annotations?.[IDENTITY_ANNOTATION] || (metadata.uid ?? "");
}
