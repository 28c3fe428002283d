/** How a Cluster shows which ClusterRequests it serves: one finalizer per request, and on shared Clusters a prefix claim. */
import type { Cluster } from "../../api/cluster.ts";
import {
  CLUSTER_REQUEST_FINALIZERS,
  COPIED_METADATA_PREFIX,
  PREFIX_CLAIM_ANNOTATION_PREFIX,
} from "../../api/constants/cluster-request.ts";

/** `request.clusters.openmcp.cloud/<uid>`: the finalizer that says "this Cluster serves request <uid>". */
export function requestFinalizer(uid: string): string {
  return `${CLUSTER_REQUEST_FINALIZERS.requestOnClusterPrefix}${uid}`;
}

/** `prefix.engine.openmcp.cloud/<uid>`: the annotation holding the name prefix granted to request <uid>. */
export function prefixClaimKey(uid: string): string {
  return `${PREFIX_CLAIM_ANNOTATION_PREFIX}${uid}`;
}

/** UIDs of the requests a Cluster serves, from its finalizers (upstream's scheduler counts the same way). */
export function servedRequests(cluster: Cluster): string[] {
  return (cluster.metadata.finalizers ?? [])
    .filter((name) => name.startsWith(CLUSTER_REQUEST_FINALIZERS.requestOnClusterPrefix))
    .map((name) => name.slice(CLUSTER_REQUEST_FINALIZERS.requestOnClusterPrefix.length));
}

/** Whether the Cluster carries request <uid>'s finalizer. */
export function serves(cluster: Cluster, uid: string): boolean {
  return cluster.metadata.finalizers?.includes(requestFinalizer(uid)) ?? false;
}

/** Prefixes claimed on the Cluster by requests other than `uid`. */
export function prefixesOfOthers(cluster: Cluster, uid: string): string[] {
  return Object.entries(cluster.metadata.annotations ?? {})
    .filter(([key]) => key.startsWith(PREFIX_CLAIM_ANNOTATION_PREFIX) && key !== prefixClaimKey(uid))
    .map(([, prefix]) => prefix);
}

/** The prefix request `uid` holds on the Cluster, if any. */
export function claimedPrefix(cluster: Cluster, uid: string): string | undefined {
  return cluster.metadata.annotations?.[prefixClaimKey(uid)];
}

/** Labels and annotations a request passes on to its Exclusive Cluster: those prefixed `metadata.open-control-plane.io/`. */
export interface CopiedMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The request's labels and annotations under {@link COPIED_METADATA_PREFIX}. */
export function copiedMetadata(metadata: {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}): CopiedMetadata {
  return { labels: prefixed(metadata.labels), annotations: prefixed(metadata.annotations) };
}

/** Whether the Cluster shows exactly the copied metadata: the same entries, and no other prefixed ones. */
export function copiedMetadataInSync(cluster: Cluster, wanted: CopiedMetadata): boolean {
  const actual = copiedMetadata(cluster.metadata);
  return sameEntries(actual.labels, wanted.labels) && sameEntries(actual.annotations, wanted.annotations);
}

function prefixed(entries: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(entries ?? {})) {
    if (key.startsWith(COPIED_METADATA_PREFIX)) result[key] = value;
  }
  return result;
}

function sameEntries(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
