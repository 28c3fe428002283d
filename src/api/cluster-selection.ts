/** Which Clusters of an object's namespace it is about: a label selector, profiles and purposes, ANDed. */
import type { LabelSelector } from "./scheduler-config.ts";

/** The fields a HibernationSchedule and a Rollout select Clusters of their namespace with (all ANDed). */
export interface ClusterSelection {
  /** Clusters with these labels; absent or empty: every Cluster of the namespace. */
  readonly selector?: LabelSelector;
  /** Only Clusters of one of these profiles (`spec.profile`); absent or empty: any. */
  readonly profiles?: readonly string[];
  /** Only Clusters with one of these purposes (`spec.purposes`); absent or empty: any. */
  readonly purposes?: readonly string[];
}
