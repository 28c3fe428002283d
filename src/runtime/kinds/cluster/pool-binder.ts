/**
 * Serves a new Cluster from a warm pool: before its first backend call, a Cluster of a ProviderConfig with a
 * pool claims an idle member (in the pool's status, guarded by resourceVersion) and the backend binds it. A
 * claim found recorded (a crash after the claim) is bound again; binding is idempotent.
 *
 * Guarantees: a Cluster claims only while nothing was made for it (no finalizer of ours, nothing at the backend
 * under its uid), so it never holds two clusters; two Clusters never claim one member (the API server takes one
 * write, the other retries on the next idle member); the claim is in the API before the backend binds.
 */
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterPool } from "../../../api/cluster-pool.ts";
import { ANNOTATIONS, RESOURCES } from "../../../api/constants.ts";
import {
  claimOf,
  claimOperations,
  idleMember,
  mayTakeMember,
  poolMemberAnnotation,
} from "../../../machines/cluster-pool/claim.ts";
import { ConflictError } from "../../errors.ts";
import type { KindContext } from "../../machine-kind.ts";
import type { EngineMetrics } from "../../metrics.ts";
import { patchObject } from "../../patch-object.ts";
import { POOL_CACHES } from "./pool-caches.ts";

/**
 * How often a claim that lost a race is tried again while an idle member is there, before the Cluster is made as
 * usual. Each loss is someone's progress (another Cluster's claim, the pool controller's status write), and with
 * a few Clusters at once and the controller writing after each claim, three tries were too few: a Cluster was
 * made in full while an idle member waited (seen once in a full run: one of three Clusters served, not two).
 */
const CLAIM_ATTEMPTS = 10;

/** See the file's summary. */
export class PoolBinder {
  readonly #context: KindContext;
  readonly #api: CustomObjectsApi;
  /** Hits, misses and time to Ready go here once the engine's controllers are made. */
  #metrics: EngineMetrics | undefined;

  constructor(context: KindContext) {
    this.#context = context;
    this.#api = context.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /** Counts into the engine's metrics from now on. */
  countInto(metrics: EngineMetrics): void {
    this.#metrics = metrics;
  }

  /** A step took `cluster` from pending or provisioning to ready: its time from creation to Ready, by source. */
  readied(
    cluster: Cluster,
    previousState: string,
    state: string,
    nowMs: number,
    poolMember: string | undefined,
  ): void {
    const created = Date.parse(cluster.metadata.creationTimestamp ?? "");
    if (state !== "ready" || !["pending", "provisioning"].includes(previousState) || Number.isNaN(created))
      return;
    const ms = Math.max(0, nowMs - created);
    this.#metrics?.clusterReady(poolMember === undefined ? "made" : "pool", ms);
    this.#context.log.info("cluster ready", {
      cluster: `${cluster.metadata.namespace}/${cluster.metadata.name}`,
      source: poolMember === undefined ? "made" : "pool",
      msSinceCreation: ms,
    });
  }

  /**
   * Binds the member `cluster` claimed, or claims and binds an idle one of `version`. Returns the Cluster's
   * pool member (`<pool>/<id>`) when it is served from a pool, now or since earlier.
   */
  async serve(
    cluster: Cluster,
    target: ClusterTarget,
    version: string | undefined,
  ): Promise<string | undefined> {
    const pools = this.#context.informers.of(POOL_CACHES.pools).list();
    const claimed = claimOf(pools, target.uid);
    if (claimed) {
      await this.#bind(claimed.member.id, target);
      return poolMemberAnnotation(claimed.pool.metadata.name ?? "", claimed.member.id);
    }
    const earlier = cluster.metadata.annotations?.[ANNOTATIONS.poolMember];
    if (earlier !== undefined) return earlier;
    if (version === undefined || !mayTakeMember(cluster, true)) return undefined;
    const ofConfig = pools.filter((pool) => pool.spec.providerConfig === target.providerConfig);
    if (ofConfig.length === 0) return undefined;
    const backend = await this.#context.backends.of(target);
    if (!backend.pools || (await backend.observe(target)).exists) return undefined;
    let candidates: readonly ClusterPool[] = ofConfig;
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const idle = idleMember(candidates, target.providerConfig, version);
      if (!idle) break;
      const poolName = idle.pool.metadata.name ?? "";
      try {
        await patchObject(
          this.#context.kubeConfig,
          {
            ...RESOURCES.ClusterPool,
            name: poolName,
            resourceVersion: idle.pool.metadata.resourceVersion ?? "",
            ...(idle.pool.metadata.uid ? { uid: idle.pool.metadata.uid } : {}),
          },
          claimOperations(idle.index, idle.member.id, {
            namespace: target.namespace,
            name: target.name,
            uid: target.uid,
          }),
          "status",
        );
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // Another Cluster (or the pool controller) wrote first: look again at what the pool holds now.
        candidates = await this.#freshPools(ofConfig);
        continue;
      }
      this.#context.log.info("pool cluster claimed", {
        cluster: `${target.namespace}/${target.name}`,
        pool: poolName,
        member: idle.member.id,
      });
      await this.#bind(idle.member.id, target);
      this.#metrics?.poolServed(poolName, "hit");
      return poolMemberAnnotation(poolName, idle.member.id);
    }
    this.#metrics?.poolServed(ofConfig[0]?.metadata.name ?? "", "miss");
    return undefined;
  }

  async #bind(id: string, target: ClusterTarget): Promise<void> {
    const backend = await this.#context.backends.of(target);
    if (!backend.pools)
      throw new Error(`backend ${backend.name} keeps no warm pools; cannot bind pool cluster ${id}`);
    await backend.pools.bind(id, target);
  }

  async #freshPools(pools: readonly ClusterPool[]): Promise<ClusterPool[]> {
    const fresh: ClusterPool[] = [];
    for (const pool of pools) {
      fresh.push(
        (await this.#api.getClusterCustomObject({
          ...RESOURCES.ClusterPool,
          name: pool.metadata.name ?? "",
        })) as ClusterPool,
      );
    }
    return fresh;
  }
}
