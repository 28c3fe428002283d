/**
 * The pool controller: keeps each ClusterPool's idle clusters made and Ready at its backend, deletes what the
 * pool no longer wants, and lets go of members their Clusters hold. Level-based: every reconcile starts from
 * what the backend holds and what the pool's status records, never from memory (see `machines/cluster-pool/plan.ts`).
 *
 * Flow: plan → write the status (guarded by resourceVersion: a claim written meanwhile makes it fail and the
 * reconcile start over) → wake, delete, make and put to sleep members at the backend. A kill -9 between any two
 * leaves records the next plan reconciles (the plan's guarantees).
 */

import { randomBytes } from "node:crypto";
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { ClusterBackend, PoolMemberSpec } from "../../../api/backend-contract.ts";
import type { Cluster } from "../../../api/cluster.ts";
import { type ClusterPool, type ClusterPoolStatus, poolMemberTarget } from "../../../api/cluster-pool.ts";
import { CLUSTER_FINALIZERS } from "../../../api/constants/cluster.ts";
import { CLUSTER_POOL_FINALIZERS } from "../../../api/constants/cluster-pool.ts";
import { REASONS, RESOURCES } from "../../../api/constants.ts";
import { errorMessage, isNotFound } from "../../../api/error-message.ts";
import type { ProviderConfig, ProviderConfigPool } from "../../../api/provider-config.ts";
import { resolveVersion } from "../../../machines/backend-cluster/kubernetes-version.ts";
import { poolSummary, withPoolSummary } from "../../../machines/cluster-pool/config-summary.ts";
import { type ClaimerState, POOL_CONDITIONS, planPool } from "../../../machines/cluster-pool/plan.ts";
import { configOwnership } from "../../../machines/cluster-profile/ownership.ts";
import { mergeConditions } from "../../../machines/shared/conditions.ts";
import { Patch } from "../../../machines/shared/json-patch.ts";
import { rfc3339 } from "../../../machines/shared/rfc3339.ts";
import { patchObject, writeDesired } from "../../api-server/patch-object.ts";
import { GoneError } from "../../controllers/errors.ts";
import { KeyedController } from "../../controllers/keyed-controller.ts";
import { Outcome } from "../../controllers/outcome.ts";
import type { ControllerParts, KindContext } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { POOL_CACHES } from "./caches.ts";
import { poolMetrics } from "./metrics.ts";

/** When to look at a pool again: while members are made or bound, and otherwise now and then. */
export interface PoolTiming {
  readonly pollMs: number;
  readonly resyncMs: number;
}

/** The versions a pool keeps, or why it can keep none. */
interface WantedVersions {
  readonly versions: readonly string[];
  readonly problem?: { readonly reason: string; readonly message: string };
}

/** A fresh member id: unique across pools and engines, a valid cluster key for every backend. */
const freshId = () => `pool-${randomBytes(6).toString("hex")}`;

/** See the file's summary. */
export class PoolController extends KeyedController {
  readonly #context: KindContext;
  readonly #timing: PoolTiming;
  readonly #api: CustomObjectsApi;
  /** Why making members of a pool failed last, until a make succeeds (shown as the Refilled condition). */
  readonly #refillErrors = new Map<string, string>();
  /** Why a hibernate or wake of a sleeping pool's member failed last, until one succeeds (the Hibernation condition). */
  readonly #sleepErrors = new Map<string, string>();

  constructor(context: KindContext, timing: PoolTiming, parts: ControllerParts) {
    super({ name: "clusterpool", log: context.log, clock: context.clock, ...parts });
    this.#context = context;
    this.#timing = timing;
    this.#api = context.kubeConfig.makeApiClient(CustomObjectsApi);
    const pools = context.informers.of(POOL_CACHES.pools);
    poolMetrics(parts.metrics).countPools(() =>
      pools.list().flatMap((pool) => {
        const name = pool.metadata.name ?? "";
        const status = pool.status ?? {};
        return [
          { pool: name, state: "idle", count: status.idle ?? 0 },
          { pool: name, state: "binding", count: status.binding ?? 0 },
          { pool: name, state: "refilling", count: status.refilling ?? 0 },
          // A sleeping pool's (spec.awake): its idle clusters asleep or on their way.
          ...(pool.spec.awake === undefined && status.asleep === undefined
            ? []
            : [
                { pool: name, state: "hibernating", count: status.hibernating ?? 0 },
                { pool: name, state: "hibernated", count: status.asleep ?? 0 },
                { pool: name, state: "waking", count: status.waking ?? 0 },
              ]),
        ];
      }),
    );
  }

  watch(): void {
    const { informers } = this.#context;
    informers.of(POOL_CACHES.pools).on((event) => this.queue.add(event.key));
    informers.of(PROFILE_CACHES.providerConfigs).on((event) => {
      for (const pool of this.#pools())
        if (pool.spec.providerConfig === event.key) this.queue.add(pool.metadata.name ?? "");
      // A line of a pool that went while no engine ran: its key, with no pool, takes the line away.
      for (const name of Object.keys(event.object.status?.pools ?? {})) this.queue.add(name);
    });
    // A claiming Cluster that holds its member now, or went away, lets the pool go on.
    informers.of(CLUSTER_CACHES.clusters).on((event) => {
      const uid = event.object.metadata?.uid;
      for (const pool of this.#pools()) {
        if (pool.status?.members?.some((member) => member.claimedBy?.uid === uid))
          this.queue.add(pool.metadata.name ?? "");
      }
    });
  }

  keys(): Iterable<string> {
    return this.#context.informers.of(POOL_CACHES.pools).keys();
  }

  async reconcile(name: string): Promise<Outcome> {
    const pool = this.#context.informers.of(POOL_CACHES.pools).get(name);
    if (!pool) {
      for (const config of this.#context.informers.of(PROFILE_CACHES.providerConfigs).list())
        if (config.status?.pools?.[name] && configOwnership(config, this.#owner()) === "ours")
          await this.#showOnConfig(config, name, undefined);
      return Outcome.awaitChange();
    }
    const config = this.#context.informers.of(PROFILE_CACHES.providerConfigs).get(pool.spec.providerConfig);
    const ours = config !== undefined && configOwnership(config, this.#owner()) === "ours";
    const held = pool.metadata.finalizers?.includes(CLUSTER_POOL_FINALIZERS.clusterPool) ?? false;
    // Another provider's pool, or one we never held whose config is missing: no write at all.
    if (!ours && !(held && config === undefined)) return Outcome.awaitChange();
    const deleting = pool.metadata.deletionTimestamp !== undefined;
    if (!deleting && !held) {
      await this.#finalizer(pool, "add");
      return Outcome.awaitChange(); // the write wakes the pool again
    }
    const backend = config ? await this.#context.backends.forConfig(config) : undefined;
    const pools = backend?.pools;
    if (!config || !backend || !pools) {
      const message = !config
        ? `ProviderConfig ${pool.spec.providerConfig} does not exist; the pool's clusters are kept until it is back`
        : `backend ${backend?.name ?? config.spec.backend} keeps no warm pools (contract 1.5)`;
      const status = await this.#writeProblem(pool, REASONS.ConfigurationProblem, message);
      if (config) await this.#showOnConfig(config, name, deleting ? undefined : poolSummary(status));
      return Outcome.requeueAfter(this.#timing.resyncMs);
    }
    const wanted: WantedVersions = deleting ? { versions: [] } : this.#versions(pool, config);
    const listed = await pools.listMembers(name);
    const plan = planPool({
      pool,
      versions: wanted.versions,
      backend: listed,
      claimers: await this.#claimers(pool),
      freshIds: Array.from(
        { length: Math.max(0, pool.spec.idle) * Math.max(1, wanted.versions.length) },
        freshId,
      ),
      ...(this.#refillErrors.has(name) ? { refillError: this.#refillErrors.get(name) as string } : {}),
      ...(wanted.problem ? { problem: wanted.problem } : {}),
      sleep: {
        offered: typeof backend.hibernate === "function" && typeof backend.wake === "function",
        backend: backend.name,
        ...(this.#sleepErrors.has(name) ? { error: this.#sleepErrors.get(name) as string } : {}),
      },
      now: rfc3339(this.clock.now()),
    });
    try {
      await writeDesired(this.#context.kubeConfig, RESOURCES.ClusterPool, pool, "status", plan.status);
    } catch (error) {
      if (error instanceof GoneError) return Outcome.awaitChange();
      throw error;
    }
    await this.#showOnConfig(config, name, deleting && plan.drained ? undefined : poolSummary(plan.status));
    // Wakes first: a Cluster that took the awake member waits for nothing, the next one for this wake.
    await this.#sleepOrWake(name, "wake", plan.wake, config, backend);
    for (const id of plan.delete) {
      this.log.info("deleting a pool cluster", { pool: name, member: id });
      await pools.deleteMember(id);
    }
    await this.#make(name, plan.create, config, pools);
    await this.#sleepOrWake(name, "hibernate", plan.hibernate, config, backend);
    if (deleting && plan.drained) {
      await this.#finalizer(pool, "remove");
      return Outcome.awaitChange();
    }
    // Nothing to wake or put to sleep: nothing is failing either (a member whose wake failed may be gone); look
    // again soon, so the Hibernation condition says so.
    const sleepSettled =
      plan.wake.length === 0 && plan.hibernate.length === 0 && this.#sleepErrors.delete(name);
    const busy =
      sleepSettled ||
      plan.create.length > 0 ||
      plan.delete.length > 0 ||
      (plan.status.binding ?? 0) > 0 ||
      (plan.status.refilling ?? 0) > 0 ||
      (plan.status.hibernating ?? 0) > 0 ||
      (plan.status.waking ?? 0) > 0;
    return Outcome.requeueAfter(busy ? this.#timing.pollMs : this.#timing.resyncMs);
  }

  #owner() {
    return {
      providerName: this.#context.providerName,
      environment: this.#context.environment,
      backends: this.#context.backends.names,
    };
  }

  #pools(): ClusterPool[] {
    return this.#context.informers.of(POOL_CACHES.pools).list();
  }

  /** The versions the pool keeps: its own list, else its config's default (or the newest it offers). */
  #versions(pool: ClusterPool, config: ProviderConfig): WantedVersions {
    if ((pool.spec.versions ?? []).length > 0) return { versions: [...(pool.spec.versions ?? [])] };
    const profile = this.#context.informers
      .of(PROFILE_CACHES.profiles)
      .list()
      .find((candidate) => candidate.spec.providerConfigRef.name === config.metadata.name);
    const resolved = resolveVersion(config.spec.defaultVersion, profile?.spec.supportedVersions ?? []);
    if (resolved.kind === "accepted") return { versions: [resolved.version] };
    return {
      versions: [],
      problem: {
        reason: REASONS.ConfigurationProblem,
        message: `no version to keep idle clusters of: ${"message" in resolved ? resolved.message : "none offered"}`,
      },
    };
  }

  /** How each Cluster that claimed a member stands; "gone" only when the API server says so. */
  async #claimers(pool: ClusterPool): Promise<Map<string, ClaimerState>> {
    const states = new Map<string, ClaimerState>();
    const clusters = this.#context.informers.of(CLUSTER_CACHES.clusters);
    for (const member of pool.status?.members ?? []) {
      const claim = member.claimedBy;
      if (!claim) continue;
      let cluster: Cluster | undefined = clusters.get(`${claim.namespace}/${claim.name}`);
      if (cluster?.metadata.uid !== claim.uid) cluster = await this.#readCluster(claim.namespace, claim.name);
      const state: ClaimerState =
        cluster === undefined || cluster.metadata.uid !== claim.uid
          ? "gone"
          : (cluster.metadata.finalizers ?? []).includes(CLUSTER_FINALIZERS.cluster)
            ? "holds"
            : "binding";
      states.set(claim.uid, state);
    }
    return states;
  }

  async #readCluster(namespace: string, name: string): Promise<Cluster | undefined> {
    try {
      return (await this.#api.getNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace,
        name,
      })) as Cluster;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async #make(
    name: string,
    members: readonly PoolMemberSpec[],
    config: ProviderConfig,
    pools: NonNullable<ClusterBackend["pools"]>,
  ): Promise<void> {
    for (const member of members) {
      this.log.info("making a pool cluster", { pool: name, member: member.id, version: member.version });
      try {
        await pools.createMember(
          member,
          poolMemberTarget(member.id, {
            name: config.metadata.name ?? "",
            ...(config.spec.settings ? { settings: config.spec.settings } : {}),
          }),
        );
        this.#refillErrors.delete(name);
      } catch (error) {
        // The member stays recorded; the next plan finds it missing and makes another.
        this.#refillErrors.set(name, `${member.id}: ${errorMessage(error)}`);
        this.log.warn("making a pool cluster failed", {
          pool: name,
          member: member.id,
          error: errorMessage(error),
        });
      }
    }
  }

  /**
   * Wakes or puts to sleep the members `ids` (recorded as Waking or Hibernating already), all at once: a local
   * hibernate waits for its processes to stop. A failure is kept for the Hibernation condition; the next plan,
   * finding the member as it is, orders again what is still wanted.
   */
  async #sleepOrWake(
    name: string,
    order: "hibernate" | "wake",
    ids: readonly string[],
    config: ProviderConfig,
    backend: ClusterBackend,
  ): Promise<void> {
    const call = backend[order]?.bind(backend);
    if (!call || ids.length === 0) return;
    const settings = config.spec.settings ? { settings: config.spec.settings } : {};
    await Promise.all(
      ids.map(async (id) => {
        this.log.info(order === "wake" ? "waking a pool cluster" : "putting a pool cluster to sleep", {
          pool: name,
          member: id,
        });
        try {
          await call(poolMemberTarget(id, { name: config.metadata.name ?? "", ...settings }));
          this.#sleepErrors.delete(name);
        } catch (error) {
          this.#sleepErrors.set(name, `${order} ${id}: ${errorMessage(error)}`);
          this.log.warn(`${order} of a pool cluster failed`, {
            pool: name,
            member: id,
            error: errorMessage(error),
          });
        }
      }),
    );
  }

  /** The pool's line on its ProviderConfig (config-summary.ts); nothing is sent when it says so already. */
  async #showOnConfig(config: ProviderConfig, name: string, summary: ProviderConfigPool | undefined) {
    const desired = withPoolSummary(config.status, name, summary);
    try {
      await writeDesired(this.#context.kubeConfig, RESOURCES.ProviderConfig, config, "status", desired);
    } catch (error) {
      if (!(error instanceof GoneError)) throw error;
    }
  }

  /** Only the Ready condition: members stay recorded as they were, for when the config or backend is back. */
  async #writeProblem(pool: ClusterPool, reason: string, message: string): Promise<ClusterPoolStatus> {
    const generation = pool.metadata.generation ?? 0;
    const conditions = mergeConditions(
      pool.status?.conditions,
      [{ type: POOL_CONDITIONS.ready, status: "False", reason, message }],
      generation,
      rfc3339(this.clock.now()),
    );
    const status = { ...pool.status, conditions };
    await writeDesired(this.#context.kubeConfig, RESOURCES.ClusterPool, pool, "status", status).catch(
      (error: unknown) => {
        if (!(error instanceof GoneError)) throw error;
      },
    );
    return status;
  }

  async #finalizer(pool: ClusterPool, wish: "add" | "remove"): Promise<void> {
    const finalizers = pool.metadata.finalizers ?? [];
    const operations =
      wish === "add"
        ? finalizers.length === 0
          ? [Patch.add(["metadata", "finalizers"], [CLUSTER_POOL_FINALIZERS.clusterPool])]
          : [Patch.add(["metadata", "finalizers", "-"], CLUSTER_POOL_FINALIZERS.clusterPool)]
        : [
            Patch.test(
              ["metadata", "finalizers", finalizers.indexOf(CLUSTER_POOL_FINALIZERS.clusterPool)],
              CLUSTER_POOL_FINALIZERS.clusterPool,
            ),
            Patch.remove(["metadata", "finalizers", finalizers.indexOf(CLUSTER_POOL_FINALIZERS.clusterPool)]),
          ];
    try {
      await patchObject(
        this.#context.kubeConfig,
        {
          ...RESOURCES.ClusterPool,
          name: pool.metadata.name ?? "",
          resourceVersion: pool.metadata.resourceVersion ?? "",
          ...(pool.metadata.uid ? { uid: pool.metadata.uid } : {}),
        },
        operations,
      );
    } catch (error) {
      if (!(error instanceof GoneError)) throw error;
    }
  }
}
