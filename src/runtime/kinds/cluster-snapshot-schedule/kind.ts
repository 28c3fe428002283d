/**
 * The ClusterSnapshotSchedule kind: at its creation and every `every` after (and at once for the latest time due it
 * has not taken, e.g. missed while no engine ran), a ClusterSnapshot of each Cluster it selects, owned by it; per
 * Cluster, those beyond `keep` are deleted (each removes its data from its store before it goes).
 */
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import type { ClusterSnapshotSchedule } from "../../../api/cluster-snapshot-schedule.ts";
import { CLUSTER_SNAPSHOT_RESOURCE } from "../../../api/constants/cluster-snapshot.ts";
import { SCHEDULE_LABEL, SNAPSHOT_SCHEDULE_KIND } from "../../../api/constants/cluster-snapshot-schedule.ts";
import { isConflict, isNotFound } from "../../../api/error-message.ts";
import { objectKey } from "../../../api/object-key.ts";
import {
  explainClusterSnapshotSchedule,
  SNAPSHOT_SCHEDULE_DEFINITION,
} from "../../../machines/cluster-snapshot-schedule/definition.ts";
import type { CreatedSlot } from "../../../machines/cluster-snapshot-schedule/machine.ts";
import {
  type SnapshotScheduleCommand,
  stepClusterSnapshotSchedule,
} from "../../../machines/cluster-snapshot-schedule/step.ts";
import { scheduleStepBasics } from "../../../machines/shared/cluster-schedule.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import type { CacheSpec } from "../../informers.ts";
import { type MachineKind, wake } from "../../machine-kind.ts";
import { SNAPSHOTS } from "../cluster-snapshot/kind.ts";
import { clustersOfNamespace, clustersOfNamespaceWake } from "../shared/namespace-wake.ts";
import { DEFAULT_SCHEDULE_TIMING } from "../shared/schedule-timing.ts";
import { ScheduleMetrics } from "./schedule-metrics.ts";

/** The cache of ClusterSnapshotSchedules. */
export const SNAPSHOT_SCHEDULES: CacheSpec<ClusterSnapshotSchedule> = {
  name: SNAPSHOT_SCHEDULE_KIND,
  kind: SNAPSHOT_SCHEDULE_KIND,
  resource: SNAPSHOT_SCHEDULE_DEFINITION.resource,
};

/** What one look reads: the Clusters and the schedule's snapshots in its namespace, and what this engine did for it. */
export interface SnapshotScheduleObservation {
  readonly clusters: readonly Cluster[];
  readonly snapshots: readonly ClusterSnapshot[];
  readonly created?: CreatedSlot;
  readonly deleted: readonly string[];
}

/** Per engine, by schedule uid: the time due last made (until the status records it), and the snapshots it deleted. */
interface SnapshotScheduleState {
  readonly created: Map<string, CreatedSlot>;
  readonly deleted: Map<string, ReadonlySet<string>>;
  readonly metrics: ScheduleMetrics;
}

/** The ClusterSnapshotSchedule kind; `kindSettings.ClusterSnapshotSchedule.enabled: false` turns it off. */
export const clusterSnapshotScheduleKind: MachineKind<
  ClusterSnapshotSchedule,
  SnapshotScheduleObservation,
  SnapshotScheduleCommand,
  RequeueTiming,
  SnapshotScheduleState
> = {
  definition: SNAPSHOT_SCHEDULE_DEFINITION,
  cache: SNAPSHOT_SCHEDULES,
  timing: DEFAULT_SCHEDULE_TIMING,
  enabled: (settings) => settings.enabled !== false,
  state: () => ({ created: new Map(), deleted: new Map(), metrics: new ScheduleMetrics() }),
  controllers(context, _settings, parts) {
    context.state.metrics.register(parts.metrics.registry);
    return [];
  },
  wakes: [
    // A Cluster that appears, changes its labels or goes changes what the schedules of its namespace select.
    clustersOfNamespaceWake(SNAPSHOT_SCHEDULES),
    // A snapshot of a schedule that completes or goes changes which of its snapshots are kept.
    wake(SNAPSHOTS, (snapshot: ClusterSnapshot) => {
      const schedule = snapshot.metadata.labels?.[SCHEDULE_LABEL];
      return schedule ? [`${snapshot.metadata.namespace}/${schedule}`] : [];
    }),
  ],

  async open(schedule, context) {
    const custom = context.kubeConfig.makeApiClient(CustomObjectsApi);
    const namespace = schedule.metadata.namespace ?? "";
    const name = schedule.metadata.name ?? "";
    const uid = schedule.metadata.uid ?? objectKey(schedule);
    return {
      async observe() {
        const clusters = clustersOfNamespace(context.informers, namespace);
        const snapshots = context.informers
          .of(SNAPSHOTS)
          .list()
          .filter(
            (snapshot) =>
              snapshot.metadata.namespace === namespace &&
              snapshot.metadata.labels?.[SCHEDULE_LABEL] === name,
          );
        // Deleted by this engine and still in the cache without its deletion: not named again.
        const present = new Set(
          snapshots.filter((each) => !each.metadata.deletionTimestamp).map((each) => each.metadata.name),
        );
        const deleted = [...(context.state.deleted.get(uid) ?? [])].filter((each) => present.has(each));
        context.state.deleted.set(uid, new Set(deleted)); // those the cache shows deleting or gone are forgotten
        const created = context.state.created.get(uid);
        return { clusters, snapshots, deleted, ...(created ? { created } : {}) };
      },
      step: (current, observation, look) =>
        stepClusterSnapshotSchedule({
          object: current,
          clusters: observation.clusters,
          snapshots: observation.snapshots,
          deleted: observation.deleted,
          ...(observation.created ? { created: observation.created } : {}),
          ...scheduleStepBasics(look, context.timing),
        }),
      async run(commands) {
        for (const command of commands) {
          if (command.kind === "create") {
            for (const body of command.snapshots) {
              try {
                await custom.createNamespacedCustomObject({ ...CLUSTER_SNAPSHOT_RESOURCE, namespace, body });
              } catch (error) {
                if (!isConflict(error)) throw error; // made already (its name is the time due's): nothing to do
                continue;
              }
              context.state.metrics.created(1);
            }
            context.state.created.set(uid, {
              slot: command.slot,
              clusters: command.snapshots.map((each) => each.spec.cluster.name),
            });
          } else {
            for (const snapshot of command.names) {
              try {
                await custom.deleteNamespacedCustomObject({
                  ...CLUSTER_SNAPSHOT_RESOURCE,
                  namespace,
                  name: snapshot,
                });
              } catch (error) {
                if (!isNotFound(error)) throw error;
                continue;
              }
              context.state.metrics.pruned(1);
            }
            context.state.deleted.set(
              uid,
              new Set([...(context.state.deleted.get(uid) ?? []), ...command.names]),
            );
          }
        }
      },
    };
  },

  describe: (command) =>
    command.kind === "create"
      ? `make ${command.snapshots.length} ClusterSnapshot(s) for ${command.slot}`
      : `delete ClusterSnapshot(s) ${command.names.join(", ")}`,

  explain: async (schedule) => explainClusterSnapshotSchedule(schedule),
};
