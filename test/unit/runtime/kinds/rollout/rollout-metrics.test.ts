import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { Rollout, RolloutStatus, RolloutTarget } from "../../../../../src/api/rollout.ts";
import { RolloutMetrics, stageSeconds } from "../../../../../src/runtime/kinds/rollout/rollout-metrics.ts";

const target = (name: string, stage: string, more: Partial<RolloutTarget>): RolloutTarget => ({
  name,
  uid: `uid-${name}`,
  stage,
  progress: "pending",
  ...more,
});
const status = (targets: RolloutTarget[]): RolloutStatus => ({
  stages: [...new Set(targets.map((t) => t.stage))].map((name) => ({
    name,
    targets: 0,
    done: 0,
    changing: 0,
    failed: 0,
    skipped: 0,
  })),
  targets,
});
const inPhase = (phase: string, preflight?: string): Rollout =>
  ({
    metadata: { name: phase },
    spec: { version: "1.37.0" },
    status: {
      phase,
      ...(preflight
        ? {
            conditions: [
              { type: "Preflight", status: "False", reason: preflight, message: "", lastTransitionTime: "" },
            ],
          }
        : {}),
    },
  }) as unknown as Rollout;

describe("the rollout metrics", () => {
  it("time a stage from its first Cluster asked to its last one done, once it is finished", () => {
    const changing = status([
      target("a", "canary", {
        progress: "done",
        changedAt: "2026-11-28T12:00:00Z",
        doneAt: "2026-11-28T12:00:05Z",
      }),
      target("b", "rest", {
        progress: "done",
        changedAt: "2026-11-28T12:00:10Z",
        doneAt: "2026-11-28T12:00:20Z",
      }),
      target("c", "rest", { progress: "changing", changedAt: "2026-11-28T12:00:12Z" }),
      target("d", "rest", { progress: "skipped" }),
    ]);
    expect(stageSeconds(changing, "canary")).toBe(5);
    expect(stageSeconds(changing, "rest")).toBeUndefined();
  });

  it("count runs by phase, runs held by reason, Clusters changed, and each stage finished once", async () => {
    const registry = new Registry();
    const metrics = new RolloutMetrics();
    const rollouts = [
      inPhase("Progressing", "DeprecatedAPIsInUse"),
      inPhase("Progressing"),
      inPhase("Succeeded"),
    ];
    metrics.register(registry, () => rollouts);
    metrics.changed(3);
    const before = status([
      target("a", "canary", { progress: "changing", changedAt: "2026-11-28T12:00:00Z" }),
    ]);
    const after = status([
      target("a", "canary", {
        progress: "done",
        changedAt: "2026-11-28T12:00:00Z",
        doneAt: "2026-11-28T12:00:07Z",
      }),
    ]);
    metrics.stepped("r", before, after);
    metrics.stepped("r", before, after); // the same step again (its status write failed): not counted twice
    metrics.stepped("r", after, after); // finished before this step: not counted
    const text = await registry.metrics();
    expect(text).toContain('openmcp_engine_rollouts{phase="Progressing"} 2');
    expect(text).toContain('openmcp_engine_rollouts{phase="Halted"} 0');
    expect(text).toContain('openmcp_engine_rollouts_blocked{reason="DeprecatedAPIsInUse"} 1');
    expect(text).toContain("openmcp_engine_rollout_clusters_changed_total 3");
    expect(text).toContain("openmcp_engine_rollout_stage_duration_seconds_count 1");
    expect(text).toContain("openmcp_engine_rollout_stage_duration_seconds_sum 7");
  });
});
