/** The ClusterSnapshotSchedule kind's metrics: ClusterSnapshots made and deleted by schedules, counted by this engine. */
import { Counter, type Registry } from "prom-client";

/** Counters of the schedules' work; a no-op until registered. */
export class ScheduleMetrics {
  #created: Counter | undefined;
  #pruned: Counter | undefined;

  /** Registers the schedules' counters into `registry`. */
  register(registry: Registry): void {
    this.#created = new Counter({
      name: "openmcp_engine_scheduled_snapshots_created_total",
      help: "ClusterSnapshots this engine made for ClusterSnapshotSchedules",
      registers: [registry],
    });
    this.#pruned = new Counter({
      name: "openmcp_engine_scheduled_snapshots_pruned_total",
      help: "ClusterSnapshots this engine deleted because their schedule keeps no more",
      registers: [registry],
    });
  }

  created(count: number): void {
    this.#created?.inc(count);
  }

  pruned(count: number): void {
    this.#pruned?.inc(count);
  }
}
