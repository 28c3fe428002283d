/** Which Clusters an object selects (HibernationSchedule, Rollout): its namespace, its selector, profiles and purposes, ANDed. Pure. */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterSelection } from "../../api/cluster-selection.ts";
import { selectorMatches } from "./label-selector.ts";

/** Whether the object of `namespace` with `selection` selects `cluster` (one being deleted never). */
export function selects(selection: ClusterSelection, namespace: string, cluster: Cluster): boolean {
  if (cluster.metadata.namespace !== namespace) return false;
  if (cluster.metadata.deletionTimestamp) return false;
  if (!selectorMatches(selection.selector, cluster.metadata.labels)) return false;
  const profiles = selection.profiles ?? [];
  if (profiles.length > 0 && !profiles.includes(cluster.spec?.profile)) return false;
  const purposes = selection.purposes ?? [];
  if (purposes.length > 0 && !(cluster.spec?.purposes ?? []).some((purpose) => purposes.includes(purpose)))
    return false;
  return true;
}

/** The Clusters selected among `clusters`, sorted by name. */
export function selectedClusters(
  selection: ClusterSelection,
  namespace: string,
  clusters: readonly Cluster[],
): Cluster[] {
  return clusters
    .filter((cluster) => selects(selection, namespace, cluster))
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

/** The names of the Clusters selected among `clusters`, sorted. */
export function selectedNames(
  selection: ClusterSelection,
  namespace: string,
  clusters: readonly Cluster[],
): string[] {
  // In code-unit order (selectedClusters' locale order can differ on punctuation).
  return selectedClusters(selection, namespace, clusters)
    .map((cluster) => cluster.metadata.name ?? "")
    .sort();
}
