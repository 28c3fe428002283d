/**
 * A world of Clusters, ClusterRequests and grants in memory, changed only through the scheduler's pure
 * functions (schedule, claimOn, withoutClaim): for property tests of the scheduling decision.
 */
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import { CLUSTER_REQUEST_LABELS } from "../../src/api/constants/cluster-request.ts";
import { ENGINE_API_VERSION } from "../../src/api/constants.ts";
import { objectKey } from "../../src/api/object-key.ts";
import type { PurposeSpec } from "../../src/api/purpose.ts";
import type { SchedulerConfig } from "../../src/api/scheduler-config.ts";
import { claimOn, withoutClaim } from "../../src/machines/cluster-request/claim.ts";
import { servedRequests, serves } from "../../src/machines/cluster-request/cluster-claims.ts";
import { type Decision, type SchedulingView, schedule } from "../../src/machines/cluster-request/schedule.ts";

/** The world; every method keeps it as an API server would (names unique, generateName filled). */
export class SchedulerWorld {
  readonly clusters = new Map<string, Cluster>();
  readonly grants = new Map<string, ClusterRequestGrant>();
  readonly requests = new Map<string, ClusterRequest>();
  #generated = 0;

  readonly config: SchedulerConfig;
  readonly purposes: ReadonlyMap<string, PurposeSpec>;
  readonly profileTraits: ReadonlyMap<string, readonly string[]>;

  constructor(
    config: SchedulerConfig,
    purposes: ReadonlyMap<string, PurposeSpec> = new Map(),
    profileTraits: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {
    this.config = config;
    this.purposes = purposes;
    this.profileTraits = profileTraits;
  }

  /** What the scheduler sees; `order` permutes the Cluster list (the caches promise no order). */
  view(request: ClusterRequest, order: (clusters: Cluster[]) => Cluster[] = (c) => c): SchedulingView {
    const grant = this.grants.get(objectKey(request));
    return {
      config: this.config,
      purposes: this.purposes,
      profileTraits: this.profileTraits,
      clusters: order([...this.clusters.values()]),
      liveRequests: new Set([...this.requests.values()].map((r) => r.metadata.uid ?? "")),
      grant: grant?.spec.requestUID === request.metadata.uid ? grant : undefined,
    };
  }

  /** Schedules `request` and carries out a placement as the runtime would; returns the decision. */
  submit(request: ClusterRequest): Decision {
    this.requests.set(objectKey(request), request);
    const decision = schedule(request, this.view(request));
    if (decision.kind !== "place") return decision;
    const uid = request.metadata.uid ?? "";
    const { placement } = decision;
    let cluster = placement.cluster;
    if (placement.created) {
      const name = cluster.metadata.name ?? `${cluster.metadata.generateName}${++this.#generated}`;
      const key = `${cluster.metadata.namespace}/${name}`;
      const existing = this.clusters.get(key);
      if (!existing) {
        cluster = { ...cluster, metadata: { ...cluster.metadata, name } };
        this.clusters.set(key, cluster);
      } else cluster = existing;
    }
    const fresh = this.clusters.get(objectKey(cluster));
    if (!fresh) throw new Error(`placement on a Cluster that does not exist: ${objectKey(cluster)}`);
    let prefix = placement.prefix;
    if (!serves(fresh, uid) || placement.created === false) {
      const claimed = claimOn(fresh, placement, uid);
      if ("problem" in claimed) return decision;
      this.clusters.set(objectKey(fresh), { ...fresh, metadata: claimed.metadata });
      prefix = claimed.prefix;
    }
    this.grants.set(objectKey(request), {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterRequestGrant",
      metadata: { name: request.metadata.name ?? "", namespace: request.metadata.namespace ?? "" },
      spec: {
        requestUID: uid,
        clusterRef: { name: fresh.metadata.name ?? "", namespace: fresh.metadata.namespace ?? "" },
        prefix: placement.shared ? (prefix ?? "") : "",
      },
    });
    return decision;
  }

  /** Deletes `request` as the scheduler releases it: its claims go, marked Clusters nobody holds are deleted. */
  remove(request: ClusterRequest): void {
    const uid = request.metadata.uid ?? "";
    for (const [key, cluster] of [...this.clusters]) {
      if (!serves(cluster, uid)) continue;
      const after = { ...cluster, metadata: withoutClaim(cluster, uid) };
      if (
        after.metadata.labels?.[CLUSTER_REQUEST_LABELS.deleteWithoutRequests] === "true" &&
        servedRequests(after).length === 0
      ) {
        this.clusters.delete(key);
      } else this.clusters.set(key, after);
    }
    this.grants.delete(objectKey(request));
    this.requests.delete(objectKey(request));
  }
}
