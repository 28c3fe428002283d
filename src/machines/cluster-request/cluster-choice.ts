/** Which existing Cluster a Shared request joins: the fitting ones, ranked by traits, then by the configured strategy. */
import { createHash } from "node:crypto";
import type { Cluster } from "../../api/cluster.ts";
import { CLUSTER_PHASES } from "../../api/constants.ts";
import { objectKey } from "../../api/object-key.ts";
import type { PurposeMapping, SchedulerConfig, SchedulerStrategy } from "../../api/scheduler-config.ts";
import { bothSelectors, selectorMatches } from "../shared/label-selector.ts";
import { servedRequests } from "./cluster-claims.ts";
import { describeWish, matchTraits, type TraitWish } from "./traits.ts";

/** Where a request's candidate Clusters live: every namespace (Cluster scope) or one. */
export function candidateNamespace(
  config: SchedulerConfig,
  mapping: PurposeMapping,
  requestNamespace: string,
): string | undefined {
  if (config.scope === "Cluster") return undefined;
  return mapping.template.metadata.namespace || requestNamespace;
}

/** Why a Cluster cannot serve a purpose, or undefined when it can (capacity aside). */
export function unfitReason(
  cluster: Cluster,
  purpose: string,
  config: SchedulerConfig,
  mapping: PurposeMapping,
  offered: readonly string[],
  wishes: readonly TraitWish[],
): string | undefined {
  if (cluster.metadata.deletionTimestamp) return "it is being deleted";
  if (cluster.spec.tenancy !== "Shared") return `its tenancy is ${cluster.spec.tenancy}`;
  if (!(cluster.spec.purposes ?? []).includes(purpose)) return `its spec.purposes do not include ${purpose}`;
  const selector = bothSelectors(config.selectors.clusters, mapping.selector);
  if (!selectorMatches(selector, cluster.metadata.labels)) return "its labels do not match the selectors";
  const traits = matchTraits(wishes, offered);
  if (!traits.admissible) {
    return `its profile ${cluster.spec.profile} does not meet the required traits: ${traits.missing.map(describeWish).join(", ")}`;
  }
  return undefined;
}

/** Whether the Cluster can take one more request under `tenancyCount` (0 = unlimited). */
export function hasRoom(cluster: Cluster, tenancyCount: number): boolean {
  return tenancyCount === 0 || servedRequests(cluster).length < tenancyCount;
}

/**
 * Picks one of `fitting` (each with how many optional traits it meets): most optional traits first;
 * among those, Ready ones before others (as upstream); then the strategy, over a stable order by
 * namespace/name. Random is seeded by the request's uid, so the same request always picks the same.
 */
export function chooseCluster(
  fitting: readonly { readonly cluster: Cluster; readonly preferred: number }[],
  strategy: SchedulerStrategy,
  seed: string,
): Cluster | undefined {
  if (fitting.length === 0) return undefined;
  const best = Math.max(...fitting.map((entry) => entry.preferred));
  let pool = fitting.filter((entry) => entry.preferred === best).map((entry) => entry.cluster);
  const ready = pool.filter((cluster) => cluster.status?.phase === CLUSTER_PHASES.ready);
  if (ready.length > 0) pool = ready;
  pool = [...pool].sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
  switch (strategy) {
    case "Simple":
      return pool[0];
    case "Random":
      return pool[seededIndex(seed, pool.length)];
    case "BalancedIgnoreEmpty": {
      const occupied = pool.filter((cluster) => servedRequests(cluster).length > 0);
      return fewestRequests(occupied.length > 0 ? occupied : pool);
    }
    case "Balanced":
      return fewestRequests(pool);
  }
}

function fewestRequests(pool: readonly Cluster[]): Cluster | undefined {
  let chosen: Cluster | undefined;
  let fewest = Number.POSITIVE_INFINITY;
  for (const cluster of pool) {
    const count = servedRequests(cluster).length;
    if (count < fewest) {
      fewest = count;
      chosen = cluster; // strictly fewer: the first wins a tie
    }
  }
  return chosen;
}

function seededIndex(seed: string, length: number): number {
  return createHash("sha256").update(seed).digest().readUInt32BE(0) % length;
}
