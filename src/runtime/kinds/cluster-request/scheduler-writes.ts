/**
 * The scheduler's writes: create or claim a Cluster for a ClusterRequest and record the grant; let go of
 * Clusters. Every claim is computed on the Cluster as just read and written guarded by its
 * resourceVersion, retried on conflict: two requests racing for one Cluster never exceed its
 * tenancyCount nor get colliding prefixes.
 */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterRequest } from "../../../api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../../api/cluster-request-grant.ts";
import type { ObjectReference } from "../../../api/common.ts";
import { CLUSTER_REQUEST_LABELS } from "../../../api/constants/cluster-request.ts";
import { ANNOTATIONS, CLUSTERS_API_VERSION, ENGINE_API_VERSION, RESOURCES } from "../../../api/constants.ts";
import { isConflict, isNotFound } from "../../../api/error-message.ts";
import { referenceKey } from "../../../api/object-key.ts";
import { claimOn, withoutClaim } from "../../../machines/cluster-request/claim.ts";
import { servedRequests, serves } from "../../../machines/cluster-request/cluster-claims.ts";
import type { Placement } from "../../../machines/cluster-request/schedule.ts";
import type { KeyedLock } from "../../../util/keyed-lock.ts";
import { writeDesired } from "../../api-server/patch-object.ts";
import { FIELD_MANAGER } from "../../api-server/server-side-apply.ts";
import { ConflictError, GoneError } from "../../controllers/errors.ts";
import type { RecentWrites } from "../../controllers/recent-writes.ts";

/** Conflicting writes are re-read and retried this often before the reconcile fails (and is retried with backoff). */
const MAX_ATTEMPTS = 5;

/** What the writes need. */
export interface SchedulerWriter {
  readonly kubeConfig: KubeConfig;
  readonly clusters: RecentWrites<Cluster>;
  readonly grants: RecentWrites<ClusterRequestGrant>;
  /** The cached Cluster of a key (the informer's), tried before a fresh read. */
  readonly cachedCluster: (key: string) => Cluster | undefined;
  /** Claims on one Cluster from this engine go one at a time: they would only conflict with each other. */
  readonly clusterLocks: KeyedLock;
}

/** Creates or claims the placement's Cluster, then writes the grant. */
export async function assign(
  writer: SchedulerWriter,
  request: ClusterRequest,
  placement: Placement,
  /** Written on a Cluster it makes ({@link ANNOTATIONS.traceparent}): its spans continue the request's. */
  traceparent?: string,
): Promise<void> {
  const uid = request.metadata.uid ?? "";
  let cluster = placement.created
    ? await createCluster(writer, traceparent ? traced(placement.cluster, traceparent) : placement.cluster)
    : undefined;
  let prefix = placement.prefix;
  if (!cluster || !serves(cluster, uid)) {
    const claimed = await claim(writer, refOf(cluster ?? placement.cluster), placement, uid);
    cluster = claimed.cluster;
    prefix = claimed.prefix;
  }
  await writeGrant(writer, request, refOf(cluster), placement.shared ? (prefix ?? "") : "");
}

/** Removes the request's finalizer and claim from a Cluster (never deleting it); gone already is fine. */
export async function letGo(writer: SchedulerWriter, ref: ObjectReference, uid: string): Promise<void> {
  await updateCluster(writer, ref, (fresh) => ({ metadata: withoutClaim(fresh, uid) }));
}

/**
 * Lets go of each Cluster and deletes those marked `delete-without-requests: "true"` that no request
 * holds any more; then deletes the request's grant.
 */
export async function release(
  writer: SchedulerWriter,
  request: ClusterRequest,
  clusters: readonly ObjectReference[],
): Promise<void> {
  const uid = request.metadata.uid ?? "";
  const api = writer.kubeConfig.makeApiClient(CustomObjectsApi);
  for (const ref of clusters) {
    const after = await updateCluster(writer, ref, (fresh) => ({ metadata: withoutClaim(fresh, uid) }));
    if (!after || after.metadata.deletionTimestamp) continue;
    if (
      after.metadata.labels?.[CLUSTER_REQUEST_LABELS.deleteWithoutRequests] !== "true" ||
      servedRequests(after).length > 0
    )
      continue;
    try {
      await api.deleteNamespacedCustomObject({
        ...resource(RESOURCES.Cluster),
        namespace: ref.namespace,
        name: ref.name,
        body: { preconditions: { resourceVersion: after.metadata.resourceVersion } },
      });
      const marked = {
        ...after,
        metadata: { ...after.metadata, deletionTimestamp: new Date().toISOString() },
      };
      writer.clusters.wrote(referenceKey(ref), marked);
    } catch (error) {
      if (!(isNotFound(error) || isConflict(error))) throw error;
      // 409: someone claimed it meanwhile (the precondition failed): it stays.
    }
  }
  await deleteGrant(writer, request);
}

/** Creates the Cluster; when one of its name exists already, returns undefined so it is claimed instead. */
async function createCluster(writer: SchedulerWriter, cluster: Cluster): Promise<Cluster | undefined> {
  const api = writer.kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    const created = (await api.createNamespacedCustomObject({
      ...resource(RESOURCES.Cluster),
      namespace: cluster.metadata.namespace ?? "",
      body: cluster,
      fieldManager: FIELD_MANAGER,
    })) as Cluster;
    writer.clusters.wrote(referenceKey(created.metadata), created);
    return created;
  } catch (error) {
    if (isConflict(error) && cluster.metadata.name) return undefined;
    throw error;
  }
}

function traced(cluster: Cluster, traceparent: string): Cluster {
  const annotations = { ...cluster.metadata.annotations, [ANNOTATIONS.traceparent]: traceparent };
  return { ...cluster, metadata: { ...cluster.metadata, annotations } };
}

/** Claims the Cluster as it is now (re-read on every attempt). */
async function claim(
  writer: SchedulerWriter,
  ref: ObjectReference,
  placement: Placement,
  uid: string,
): Promise<{ cluster: Cluster; prefix: string | undefined }> {
  let prefix: string | undefined;
  const cluster = await updateCluster(writer, ref, (fresh) => {
    const result = claimOn(fresh, placement, uid);
    if ("problem" in result) throw new Error(`${result.problem}; choosing again`);
    prefix = result.prefix;
    return { metadata: result.metadata };
  });
  if (!cluster) throw new Error(`Cluster ${referenceKey(ref)} vanished; making it again`);
  return { cluster, prefix };
}

/**
 * Computes the Cluster's new metadata and writes the difference guarded by its resourceVersion: first
 * from the freshest copy this engine knows (its own last write, else the cache), on conflict from a
 * fresh read, again; undefined when the Cluster does not exist. One at a time per Cluster.
 */
function updateCluster(
  writer: SchedulerWriter,
  ref: ObjectReference,
  change: (fresh: Cluster) => { metadata: Cluster["metadata"] },
): Promise<Cluster | undefined> {
  const key = referenceKey(ref);
  return writer.clusterLocks.run(key, async () => {
    const cached = writer.cachedCluster(key);
    const known = cached ? (writer.clusters.get(key, cached) ?? cached) : undefined;
    return writeCluster(writer, ref, change, known);
  });
}

async function writeCluster(
  writer: SchedulerWriter,
  ref: ObjectReference,
  change: (fresh: Cluster) => { metadata: Cluster["metadata"] },
  known: Cluster | undefined,
): Promise<Cluster | undefined> {
  const api = writer.kubeConfig.makeApiClient(CustomObjectsApi);
  for (let attempt = 1; ; attempt++) {
    let fresh: Cluster;
    if (attempt === 1 && known) fresh = known;
    else {
      try {
        fresh = (await api.getNamespacedCustomObject({
          ...resource(RESOURCES.Cluster),
          namespace: ref.namespace,
          name: ref.name,
        })) as Cluster;
      } catch (error) {
        if (isNotFound(error)) {
          writer.clusters.wrote(referenceKey(ref), undefined);
          return undefined;
        }
        throw error;
      }
    }
    try {
      const written = await writeDesired(
        writer.kubeConfig,
        RESOURCES.Cluster,
        fresh,
        "metadata",
        change(fresh).metadata,
      );
      const now = written?.object ?? fresh;
      writer.clusters.wrote(referenceKey(ref), now);
      return now;
    } catch (error) {
      if (error instanceof GoneError) {
        writer.clusters.wrote(referenceKey(ref), undefined);
        return undefined;
      }
      if (!(error instanceof ConflictError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** Writes the grant (same name and namespace as the request, owned by it); a stale one of an earlier request is replaced. */
async function writeGrant(
  writer: SchedulerWriter,
  request: ClusterRequest,
  clusterRef: ObjectReference,
  prefix: string,
): Promise<void> {
  const api = writer.kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = request.metadata.namespace ?? "";
  const name = request.metadata.name ?? "";
  const uid = request.metadata.uid ?? "";
  const body: ClusterRequestGrant = {
    apiVersion: ENGINE_API_VERSION,
    kind: "ClusterRequestGrant",
    metadata: {
      name,
      namespace,
      ownerReferences: [
        { apiVersion: CLUSTERS_API_VERSION, kind: "ClusterRequest", name, uid, blockOwnerDeletion: true },
      ],
    },
    spec: { requestUID: uid, clusterRef, prefix },
  };
  for (let attempt = 1; ; attempt++) {
    try {
      const created = (await api.createNamespacedCustomObject({
        ...resource(RESOURCES.ClusterRequestGrant),
        namespace,
        body,
        fieldManager: FIELD_MANAGER,
      })) as ClusterRequestGrant;
      writer.grants.wrote(referenceKey({ namespace, name }), created);
      return;
    } catch (error) {
      if (!isConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
    const existing = (await api.getNamespacedCustomObject({
      ...resource(RESOURCES.ClusterRequestGrant),
      namespace,
      name,
    })) as ClusterRequestGrant;
    const same =
      existing.spec.requestUID === uid &&
      referenceKey(existing.spec.clusterRef) === referenceKey(clusterRef) &&
      existing.spec.prefix === prefix;
    if (same) {
      writer.grants.wrote(referenceKey({ namespace, name }), existing);
      return;
    }
    // Its spec is immutable: a grant of an earlier request of this name (or an outdated one) is replaced.
    await deleteGrantObject(api, namespace, name, existing.metadata.resourceVersion);
  }
}

async function deleteGrant(writer: SchedulerWriter, request: ClusterRequest): Promise<void> {
  const api = writer.kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = request.metadata.namespace ?? "";
  const name = request.metadata.name ?? "";
  await deleteGrantObject(api, namespace, name, undefined, request.metadata.uid);
  writer.grants.wrote(referenceKey({ namespace, name }), undefined);
}

/** Deletes a grant (only this request's when `uid` is given); gone already is fine. */
async function deleteGrantObject(
  api: CustomObjectsApi,
  namespace: string,
  name: string,
  resourceVersion: string | undefined,
  uid?: string,
): Promise<void> {
  try {
    if (uid !== undefined) {
      const existing = (await api.getNamespacedCustomObject({
        ...resource(RESOURCES.ClusterRequestGrant),
        namespace,
        name,
      })) as ClusterRequestGrant;
      if (existing.spec.requestUID !== uid) return; // a newer request's grant
      resourceVersion = existing.metadata.resourceVersion;
    }
    await api.deleteNamespacedCustomObject({
      ...resource(RESOURCES.ClusterRequestGrant),
      namespace,
      name,
      ...(resourceVersion ? { body: { preconditions: { resourceVersion } } } : {}),
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

function refOf(cluster: Cluster): ObjectReference {
  return { name: cluster.metadata.name ?? "", namespace: cluster.metadata.namespace ?? "" };
}

function resource(kind: { readonly group: string; readonly version: string; readonly plural: string }) {
  return { group: kind.group, version: kind.version, plural: kind.plural };
}
