/**
 * The scheduler's commands carried out in a memory world while a plan property makes it (the runtime's scheduler
 * writes go through an API server, which a memory world has none of): as scheduler-writes.ts does them, with the
 * scheduler's own pure parts (claimOn, withoutClaim). Only for making worlds: what plan is compared with is held.
 */
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import type { ObjectReference } from "../../src/api/common.ts";
import { CLUSTER_REQUEST_LABELS } from "../../src/api/constants/cluster-request.ts";
import { ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import { objectKey, referenceKey } from "../../src/api/object-key.ts";
import { claimOn, withoutClaim } from "../../src/machines/cluster-request/claim.ts";
import { servedRequests, serves } from "../../src/machines/cluster-request/cluster-claims.ts";
import type { Placement } from "../../src/machines/cluster-request/schedule.ts";
import type { ClusterRequestCommand } from "../../src/machines/cluster-request/step.ts";
import type { MemoryApi } from "./memory-api.ts";
import { markDeleted, type SetupRun } from "./plan-harness.ts";

/** `object` stored anew: its resourceVersion one up, as the API server bumps it. */
function bumped<T extends { readonly metadata: { readonly resourceVersion?: string } }>(object: T): T {
  const resourceVersion = String(Number(object.metadata.resourceVersion ?? "0") + 1);
  return { ...object, metadata: { ...object.metadata, resourceVersion } };
}

/** The scheduler's commands, carried out in `api` at `at` (ms). */
export function schedulingInto(api: MemoryApi, at: number): SetupRun {
  let made = 0;
  const clusterOf = (ref: ObjectReference) =>
    api.get(RESOURCES.Cluster, referenceKey(ref)) as Cluster | undefined;
  const putCluster = (cluster: Cluster) => api.put(RESOURCES.Cluster, bumped(cluster));

  const assign = (request: ClusterRequest, placement: Placement) => {
    const uid = request.metadata.uid ?? "";
    let cluster: Cluster | undefined;
    if (placement.created) {
      const name = placement.cluster.metadata.name ?? `${placement.cluster.metadata.generateName}${++made}`;
      const ref = { namespace: placement.cluster.metadata.namespace ?? "", name };
      if (!clusterOf(ref)) {
        cluster = {
          ...placement.cluster,
          metadata: {
            ...placement.cluster.metadata,
            name,
            uid: `c1a55000-0000-4000-8000-${String(++made).padStart(12, "0")}`,
            generation: 1,
            resourceVersion: "1",
          },
        };
        api.put(RESOURCES.Cluster, cluster);
      }
    }
    let prefix = placement.prefix;
    if (!cluster || !serves(cluster, uid)) {
      const ref = {
        namespace: (cluster ?? placement.cluster).metadata.namespace ?? "",
        name: (cluster ?? placement.cluster).metadata.name ?? "",
      };
      const fresh = clusterOf(ref);
      if (!fresh) throw new Error(`Cluster ${referenceKey(ref)} vanished`);
      const claimed = claimOn(fresh, placement, uid);
      if ("problem" in claimed) throw new Error(claimed.problem);
      cluster = { ...fresh, metadata: claimed.metadata };
      putCluster(cluster);
      prefix = claimed.prefix;
    }
    const grant: ClusterRequestGrant = {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterRequestGrant",
      metadata: {
        name: request.metadata.name ?? "",
        namespace: request.metadata.namespace ?? "",
        uid: `9a000000-0000-4000-8000-${String(++made).padStart(12, "0")}`,
        resourceVersion: "1",
      },
      spec: {
        requestUID: uid,
        clusterRef: { name: cluster.metadata.name ?? "", namespace: cluster.metadata.namespace ?? "" },
        prefix: placement.shared ? (prefix ?? "") : "",
      },
    };
    api.put(RESOURCES.ClusterRequestGrant, grant);
  };

  const letGo = (ref: ObjectReference, uid: string) => {
    const fresh = clusterOf(ref);
    if (fresh) putCluster({ ...fresh, metadata: withoutClaim(fresh, uid) });
    return fresh && clusterOf(ref);
  };

  const release = (request: ClusterRequest, clusters: readonly ObjectReference[]) => {
    const uid = request.metadata.uid ?? "";
    for (const ref of clusters) {
      const after = letGo(ref, uid);
      if (!after || after.metadata.deletionTimestamp) continue;
      if (
        after.metadata.labels?.[CLUSTER_REQUEST_LABELS.deleteWithoutRequests] === "true" &&
        servedRequests(after).length === 0
      )
        markDeleted(api, after, at);
    }
    const grant = api.get(RESOURCES.ClusterRequestGrant, objectKey(request)) as
      | ClusterRequestGrant
      | undefined;
    if (grant?.spec.requestUID === uid) api.put(RESOURCES.ClusterRequestGrant, grant, true);
  };

  return async (commands, object) => {
    const request = object as unknown as ClusterRequest;
    for (const command of commands as readonly ClusterRequestCommand[]) {
      if (command.kind === "assign") assign(request, command.placement);
      else if (command.kind === "letGo") letGo(command.cluster, request.metadata.uid ?? "");
      else release(request, command.clusters);
    }
  };
}
