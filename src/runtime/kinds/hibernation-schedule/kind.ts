/**
 * The HibernationSchedule kind: at each event of a schedule's timetable (and at once for the latest one it has
 * not applied, e.g. missed while no engine ran), the hibernate annotation is written on every Cluster it selects.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../api/constants/hibernation.ts";
import { RESOURCES } from "../../../api/constants.ts";
import { isNotFound } from "../../../api/error-message.ts";
import type { HibernationSchedule, ScheduledEvent } from "../../../api/hibernation-schedule.ts";
import { objectKey } from "../../../api/object-key.ts";
import {
  explainHibernationSchedule,
  HIBERNATION_SCHEDULE_DEFINITION,
} from "../../../machines/hibernation-schedule/definition.ts";
import {
  type AnnotateCommand,
  stepHibernationSchedule,
} from "../../../machines/hibernation-schedule/step.ts";
import { scheduleStepBasics } from "../../../machines/shared/cluster-schedule.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import { definitionCache } from "../../informers.ts";
import type { MachineKind } from "../../machine-kind.ts";
import { clustersOfNamespace, clustersOfNamespaceWake } from "../shared/namespace-wake.ts";
import { DEFAULT_SCHEDULE_TIMING } from "../shared/schedule-timing.ts";

/** The cache of HibernationSchedules. */
export const SCHEDULES = definitionCache<HibernationSchedule>(HIBERNATION_SCHEDULE_DEFINITION);

/** What one look reads: the Clusters of the schedule's namespace, and what this engine last wrote for it. */
export interface ScheduleObservation {
  readonly clusters: readonly Cluster[];
  readonly written?: ScheduledEvent & { readonly clusters: readonly string[] };
}

/** Per engine: the event last written for each schedule (by uid), until its status records it. */
interface ScheduleState {
  readonly written: Map<string, ScheduledEvent & { readonly clusters: readonly string[] }>;
}

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** The HibernationSchedule kind; `kindSettings.HibernationSchedule.enabled: false` turns it off. */
export const hibernationScheduleKind: MachineKind<
  HibernationSchedule,
  ScheduleObservation,
  AnnotateCommand,
  RequeueTiming,
  ScheduleState
> = {
  definition: HIBERNATION_SCHEDULE_DEFINITION,
  cache: SCHEDULES,
  timing: DEFAULT_SCHEDULE_TIMING,
  enabled: (settings) => settings.enabled !== false,
  state: () => ({ written: new Map() }),
  // A Cluster that appears, changes its labels or goes wakes the schedules of its namespace (the count selected).
  wakes: [clustersOfNamespaceWake(SCHEDULES)],

  async open(schedule, context) {
    const custom = context.kubeConfig.makeApiClient(CustomObjectsApi);
    const namespace = schedule.metadata.namespace ?? "";
    const uid = schedule.metadata.uid ?? objectKey(schedule);
    return {
      async observe() {
        const clusters = clustersOfNamespace(context.informers, namespace);
        const written = context.state.written.get(uid);
        return { clusters, ...(written ? { written } : {}) };
      },
      step: (current, observation, look) =>
        stepHibernationSchedule({
          object: current,
          clusters: observation.clusters,
          ...(observation.written ? { written: observation.written } : {}),
          ...scheduleStepBasics(look, context.timing),
        }),
      async run(commands) {
        for (const command of commands) {
          const value = command.action === "sleep" ? "true" : "false";
          for (const name of command.clusters) {
            try {
              // A merge patch of this one annotation: the Cluster's other annotations stay as they are.
              await custom.patchNamespacedCustomObject(
                {
                  ...RESOURCES.Cluster,
                  namespace,
                  name,
                  body: { metadata: { annotations: { [HIBERNATE_ANNOTATION]: value } } },
                },
                mergePatch,
              );
            } catch (error) {
              if (!isNotFound(error)) throw error; // deleted meanwhile: nothing to put to sleep
            }
          }
          context.state.written.set(uid, {
            action: command.action,
            time: command.time,
            clusters: command.clusters,
          });
        }
      },
    };
  },

  describe: (command) => `${command.action} ${command.clusters.length} Cluster(s) (event of ${command.time})`,

  explain: async (schedule) => explainHibernationSchedule(schedule),
};
