/**
 * Serves a new Cluster from a warm pool, as its machine orders: a look offers the step an idle member (or the one
 * a pool records as the Cluster's claim), and the step's `claimPoolMember` command claims it (in the pool's
 * status, guarded by resourceVersion) and has the backend bind it. A claim found recorded (a crash after the
 * claim) is bound again; binding is idempotent.
 *
 * Guarantees: a Cluster claims only while nothing was made for it (no finalizer of ours, nothing at the backend
 * under its uid), so it never holds two clusters; two Clusters never claim one member (the API server takes one
 * write, the other retries on the next idle member); the claim is in the API before the backend binds.
 */

import { CustomObjectsApi } from "@kubernetes/client-node";
import type { ClusterObservation, ClusterTarget } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterPool } from "../../../api/cluster-pool.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../../api/constants/cluster-pool.ts";
import { HIBERNATE_ANNOTATION } from "../../../api/constants/hibernation.ts";
import { RESOURCES } from "../../../api/constants.ts";
import type { PoolMemberFacts } from "../../../machines/cluster/machine.ts";
import {
  claimOf,
  claimOperations,
  idleMember,
  isClaimable,
  mayTakeMember,
} from "../../../machines/cluster-pool/claim.ts";
import { ConflictError } from "../../controllers/errors.ts";
import { RecentWrites } from "../../controllers/recent-writes.ts";
import type { CommandWriter, KindContext } from "../../machine-kind.ts";
import type { EngineMetrics } from "../../metrics.ts";
import { POOL_CACHES } from "./caches.ts";
import { type PoolMetrics, poolMetrics } from "./metrics.ts";

/** What the pools say about one Cluster, for its step. */
export interface PoolOffer {
  /** The member that serves or may serve it; undefined: none. */
  readonly member: PoolMemberFacts | undefined;
  /** A pool serves its ProviderConfig and it may still take a member: a Cluster made as usual is a pool miss. */
  readonly candidate: boolean;
}

/** See the file's summary. */
export class PoolBinder {
  readonly #context: KindContext;
  readonly #api: CustomObjectsApi;
  /** Pools as this engine last wrote or read them, while the cache lags behind (claims must see their own). */
  readonly #recent: RecentWrites<ClusterPool>;
  /** Hits, misses and time to Ready go here once the engine's controllers are made. */
  #metrics: PoolMetrics | undefined;
  /** Clusters (by uid) this engine gave a sleeping member, until Ready: their time to Ready is a `woken` one. */
  readonly #claimedAsleep = new Set<string>();

  constructor(context: KindContext) {
    this.#context = context;
    this.#api = context.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#recent = new RecentWrites<ClusterPool>(context.clock);
  }

  /** Counts into the engine's metrics from now on. */
  countInto(metrics: EngineMetrics): void {
    this.#metrics = poolMetrics(metrics);
  }

  /**
   * A step took `cluster` from pending, claimingPoolMember or provisioning to ready, or from waking to its first
   * ready (no endpoint published before: a sleeping pool member woken for it): its time from creation to Ready, by
   * source (`pool` when it names its pool member, `woken` when that member was asleep or waking when claimed here
   * or it was woken on its way to its first Ready, else `made`).
   */
  readied(cluster: Cluster, previousState: string, state: string, nowMs: number): void {
    const created = Date.parse(cluster.metadata.creationTimestamp ?? "");
    const firstWake = previousState === "waking" && cluster.status?.apiServer === undefined;
    const uid = cluster.metadata.uid ?? "";
    const woken = firstWake || (state === "ready" && this.#claimedAsleep.delete(uid));
    if (
      state !== "ready" ||
      !(firstWake || ["pending", "claimingPoolMember", "provisioning"].includes(previousState)) ||
      Number.isNaN(created)
    )
      return;
    const source =
      cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] === undefined
        ? "made"
        : woken
          ? "woken"
          : "pool";
    const ms = Math.max(0, nowMs - created);
    this.#metrics?.clusterReady(source, ms);
    this.#context.log.info("cluster ready", {
      cluster: `${cluster.metadata.namespace}/${cluster.metadata.name}`,
      source,
      msSinceCreation: ms,
    });
  }

  /** A Cluster a pool could have served was made as usual (no member was left for it). */
  missed(target: ClusterTarget): void {
    const pool = this.#pools().find((entry) => entry.spec.providerConfig === target.providerConfig);
    this.#metrics?.poolServed(pool?.metadata.name ?? "", "miss");
  }

  /**
   * Read-only, for a look: the member a pool records as claimed by the Cluster of `target`, else an idle one of
   * `version` it may claim (nothing made for it yet: `observation` of the backend finds nothing).
   */
  async offer(
    cluster: Cluster,
    target: ClusterTarget,
    version: string | undefined,
    observation: ClusterObservation,
  ): Promise<PoolOffer> {
    const pools = this.#pools();
    const claimed = claimOf(pools, target.uid);
    if (claimed) {
      const member = { pool: claimed.pool.metadata.name ?? "", member: claimed.member.id, claimed: true };
      return { member, candidate: true };
    }
    const ofConfig = pools.filter((pool) => pool.spec.providerConfig === target.providerConfig);
    if (ofConfig.length === 0 || version === undefined || !mayTakeMember(cluster, !observation.exists)) {
      return { member: undefined, candidate: false };
    }
    if (!(await this.#context.backends.of(target)).pools) return { member: undefined, candidate: false };
    const asksToSleep = cluster.metadata.annotations?.[HIBERNATE_ANNOTATION] === "true";
    const idle = idleMember(ofConfig, target.providerConfig, version, asksToSleep);
    return {
      member: idle && { pool: idle.pool.metadata.name ?? "", member: idle.member.id, claimed: false },
      candidate: true,
    };
  }

  /**
   * The `claimPoolMember` command: claims member `member` of pool `poolName` for the Cluster of `target` (in the
   * pool's status, through `writer`, guarded by its resourceVersion and a test on the member's entry), then the
   * backend binds it. Idempotent: a claim found recorded is bound again. A claim that lost a race (another
   * Cluster, or the pool controller, wrote first) is no failure: the next look finds the pool as it is now.
   */
  async claim(poolName: string, member: string, target: ClusterTarget, writer: CommandWriter): Promise<void> {
    const pool = this.#pools().find((entry) => entry.metadata.name === poolName);
    const index = pool?.status?.members?.findIndex((entry) => entry.id === member) ?? -1;
    const entry = pool?.status?.members?.[index];
    if (!pool || !entry) return; // gone meanwhile: the next look decides again
    if (entry.claimedBy?.uid !== target.uid) {
      if (!isClaimable(entry)) return; // another's now, or no longer to be taken (being made, going to sleep)
      try {
        const written = await writer.patch(
          {
            ...RESOURCES.ClusterPool,
            name: poolName,
            resourceVersion: pool.metadata.resourceVersion ?? "",
            ...(pool.metadata.uid ? { uid: pool.metadata.uid } : {}),
          },
          claimOperations(index, member, { namespace: target.namespace, name: target.name, uid: target.uid }),
          "status",
        );
        if (written) this.#recent.wrote(poolName, written as ClusterPool);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // Someone wrote first: the next look reads the pool as it is now, not the cache's old copy.
        this.#recent.wrote(poolName, await this.#freshPool(poolName));
        return;
      }
      const asleep = entry.phase !== "Ready";
      this.#context.log.info("pool cluster claimed", {
        cluster: `${target.namespace}/${target.name}`,
        pool: poolName,
        member,
        ...(asleep ? { woken: true } : {}),
      });
      this.#metrics?.poolServed(poolName, asleep ? "woken" : "hit");
      if (asleep) this.#claimedAsleep.add(target.uid);
    }
    await this.#bind(member, target);
  }

  /** The pools, as the cache holds them or newer as this engine wrote or read them since. */
  #pools(): ClusterPool[] {
    return this.#recent.overlay(
      this.#context.informers.of(POOL_CACHES.pools).list(),
      (pool) => pool.metadata.name ?? "",
    );
  }

  async #bind(id: string, target: ClusterTarget): Promise<void> {
    const backend = await this.#context.backends.of(target);
    if (!backend.pools)
      throw new Error(`backend ${backend.name} keeps no warm pools; cannot bind pool cluster ${id}`);
    await backend.pools.bind(id, target);
  }

  async #freshPool(name: string): Promise<ClusterPool> {
    return (await this.#api.getClusterCustomObject({ ...RESOURCES.ClusterPool, name })) as ClusterPool;
  }
}
