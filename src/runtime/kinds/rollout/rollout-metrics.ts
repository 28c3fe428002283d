/**
 * The Rollout kind's metrics: runs by phase and runs held by a preflight check, by reason (both read from the Rollout
 * cache at scrape time), Clusters this engine asked for a version, and how long stages took, from the first Cluster
 * of a stage asked to its last one done (from the run's own status, so a stage an engine restart cut through is
 * counted once, by the engine that saw it end).
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { PREFLIGHT_CONDITION } from "../../../api/constants/rollout.ts";
import type { Rollout, RolloutStatus } from "../../../api/rollout.ts";
import { falseReason } from "../../../machines/shared/conditions.ts";
import { countsBy, scrapedGauge } from "../../scraped-gauge.ts";

/** Seconds a stage takes: from a simulated fleet's seconds to a cloud's hours. */
const STAGE_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200, 21_600];

/** The run's phases, each reported (0 when none is in it) so a dashboard sees them all. */
const PHASES = ["Pending", "Progressing", "Paused", "Halted", "Succeeded", "Aborted"];

/** Seconds stage `name` took in `status`, once every Cluster of it is done or skipped (undefined before). */
export function stageSeconds(status: RolloutStatus | undefined, name: string): number | undefined {
  const targets = (status?.targets ?? []).filter((target) => target.stage === name);
  if (targets.length === 0 || targets.some((t) => t.progress !== "done" && t.progress !== "skipped"))
    return undefined;
  const asked = targets.flatMap((t) => (t.changedAt ? [Date.parse(t.changedAt)] : []));
  const done = targets.flatMap((t) => (t.doneAt ? [Date.parse(t.doneAt)] : []));
  if (asked.length === 0 || done.length === 0) return undefined;
  return Math.max(0, Math.max(...done) - Math.min(...asked)) / 1_000;
}

/** The reason a preflight check holds the current stage of a running rollout; undefined while none does. */
function heldBy(rollout: Rollout): string | undefined {
  return rollout.status?.phase === "Progressing"
    ? falseReason(rollout.status, PREFLIGHT_CONDITION)
    : undefined;
}

export class RolloutMetrics {
  #clustersChanged: Counter | undefined;
  #stageDuration: Histogram | undefined;
  /** `<rollout uid>/<stage>` observed already: a step taken again (a failed status write) counts no stage twice. */
  readonly #observed = new Set<string>();

  /** Registers the metrics into `registry`, counting the Rollouts `rollouts` lists at each scrape. */
  register(registry: Registry, rollouts: () => readonly Rollout[]): void {
    scrapedGauge(
      registry,
      {
        name: "openmcp_engine_rollouts",
        help: "Rollouts by phase: Pending, Progressing, Paused, Halted, Succeeded, Aborted",
        labelNames: ["phase"],
      },
      () =>
        countsBy(
          "phase",
          rollouts().flatMap((rollout) => rollout.status?.phase || []),
          PHASES,
        ),
    );
    scrapedGauge(
      registry,
      {
        name: "openmcp_engine_rollouts_blocked",
        help: "Rollouts whose current stage a preflight check holds, by reason (VersionNotOffered, VersionSkew, DeprecatedAPIsInUse, DeprecatedAPIsNotChecked)",
        labelNames: ["reason"],
      },
      () =>
        countsBy(
          "reason",
          rollouts().flatMap((rollout) => heldBy(rollout) ?? []),
        ),
    );
    this.#clustersChanged = new Counter({
      name: "openmcp_engine_rollout_clusters_changed_total",
      help: "Clusters this engine asked for a rollout's version",
      registers: [registry],
    });
    this.#stageDuration = new Histogram({
      name: "openmcp_engine_rollout_stage_duration_seconds",
      help: "Time a rollout's stage took, from its first Cluster asked to its last one done",
      buckets: STAGE_BUCKETS,
      registers: [registry],
    });
  }

  /** `count` Clusters were asked for a version. */
  changed(count: number): void {
    this.#clustersChanged?.inc(count);
  }

  /** A step took run `uid` from `before` to `after`: each stage finished by it is observed. */
  stepped(uid: string, before: RolloutStatus | undefined, after: RolloutStatus | undefined): void {
    for (const stage of after?.stages ?? []) {
      const key = `${uid}/${stage.name}`;
      if (this.#observed.has(key) || stageSeconds(before, stage.name) !== undefined) continue;
      const seconds = stageSeconds(after, stage.name);
      if (seconds === undefined) continue;
      this.#observed.add(key);
      this.#stageDuration?.observe(seconds);
    }
  }
}
