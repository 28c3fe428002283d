/** Which Clusters a HibernationSchedule selects: its namespace, its selector, its profiles and purposes, ANDed. Pure. */
import type { Cluster } from "../../api/cluster.ts";
import type { HibernationScheduleSpec } from "../../api/hibernation-schedule.ts";
import { selectorMatches } from "../shared/label-selector.ts";

/** Whether the schedule of `namespace` with `spec` selects `cluster` (one being deleted never). */
export function selects(spec: HibernationScheduleSpec, namespace: string, cluster: Cluster): boolean {
  if (cluster.metadata.namespace !== namespace) return false;
  if (cluster.metadata.deletionTimestamp) return false;
  if (!selectorMatches(spec.selector, cluster.metadata.labels)) return false;
  const profiles = spec.profiles ?? [];
  if (profiles.length > 0 && !profiles.includes(cluster.spec?.profile)) return false;
  const purposes = spec.purposes ?? [];
  if (purposes.length > 0 && !(cluster.spec?.purposes ?? []).some((purpose) => purposes.includes(purpose)))
    return false;
  return true;
}

/** The names of the Clusters selected among `clusters`, sorted. */
export function selectedNames(
  spec: HibernationScheduleSpec,
  namespace: string,
  clusters: readonly Cluster[],
): string[] {
  return clusters
    .filter((cluster) => selects(spec, namespace, cluster))
    .map((cluster) => cluster.metadata.name ?? "")
    .sort();
}
