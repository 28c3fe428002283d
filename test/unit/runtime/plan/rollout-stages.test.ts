/**
 * A planned Rollout's stages: the Clusters of each stage in the order the run asks them (the canary first) and the
 * write each gets, equal to what the Rollout's own step then does, run to the end over a fleet in memory; a run that
 * froze its targets already is planned from them, and one that is over writes nothing more.
 */
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../../../src/api/provider-config.ts";
import type { Rollout } from "../../../../src/api/rollout.ts";
import { mergeSettings, settingsHash } from "../../../../src/machines/rollout/settings.ts";
import { stepRollout } from "../../../../src/machines/rollout/step.ts";
import { rolloutStages } from "../../../../src/runtime/plan/rollout-stages.ts";
import {
  Fleet,
  fleetCluster,
  fleetProfile,
  fleetRollout,
  ringOneFirst,
} from "../../../support/rollout-fleet.ts";
import { RUN_T0, RUN_TIMING } from "../../../support/rollout-runs.ts";

const OLD = "1.33.6";
const NEW = "1.34.2";

/** Ten Clusters; c01, c04 and c07 in ring 1. */
const fleetOfTen = () =>
  new Fleet(
    Array.from({ length: 10 }, (_, i) =>
      fleetCluster(`c${String(i).padStart(2, "0")}`, OLD, i % 3 === 1 ? { ring: "1" } : {}),
    ),
  );

const SPEC = ringOneFirst(NEW, { name: "quarter", share: 25 });

/** The run's own step, over and over, each asked Cluster Ready at once: the stage and order of every write. */
function runToTheEnd(fleet: Fleet, rollout: Rollout): { stage: string; name: string }[] {
  const asked: { stage: string; name: string }[] = [];
  let current = rollout;
  for (let look = 0; look < 50 && current.status?.phase !== "Succeeded"; look++) {
    const result = stepRollout({
      object: current,
      clusters: fleet.list(),
      profiles: [fleetProfile([OLD, NEW])],
      now: new Date(RUN_T0).toISOString(),
      nowMs: RUN_T0,
      timing: RUN_TIMING,
    });
    for (const command of result.commands) {
      if (command.kind !== "change") continue; // this fleet asks no snapshot, and no config, before a change
      for (const change of command.clusters)
        asked.push({ stage: result.desired.status?.currentStage ?? "", name: change.name });
      fleet.apply(command);
      for (const change of command.clusters) fleet.settle(change.name, "ready");
    }
    current = { ...current, status: result.desired.status } as Rollout;
  }
  expect(current.status?.phase).toBe("Succeeded");
  return asked;
}

describe("a planned Rollout's stages", () => {
  it("are the stages and the order in which the run then asks its Clusters, the canary first", () => {
    const fleet = fleetOfTen();
    const rollout = fleetRollout(SPEC);
    const planned = rolloutStages(rollout, fleet.list());

    expect(planned.frozen).toBe("now");
    expect(planned.stages.map((stage) => [stage.name, stage.targets.map((t) => t.name)])).toEqual([
      ["canary", ["c00"]],
      ["ring1", ["c01", "c04", "c07"]],
      ["quarter", ["c02", "c03", "c05"]],
      ["rest", ["c06", "c08", "c09"]],
    ]);
    const predicted = planned.stages.flatMap((stage) =>
      stage.targets.map((target) => ({ stage: stage.name, name: target.name })),
    );
    expect(runToTheEnd(fleetOfTen(), rollout)).toEqual(predicted);
  });

  it("gives each Cluster the write the kind makes: the version and the run that asked", () => {
    const [target] = rolloutStages(fleetRollout(SPEC), fleetOfTen().list()).stages[0]?.targets ?? [];
    expect(target).toEqual({
      name: "c00",
      from: OLD,
      to: NEW,
      progress: "pending",
      writes: [
        {
          op: "add",
          path: "/metadata/annotations",
          value: { "engine.openmcp.cloud/changed-by-rollout": "r/rollout-uid" },
        },
        { op: "add", path: "/spec/kubernetes/version", value: NEW },
      ],
    });
  });

  it("of a run started already are its recorded targets: a Cluster made since is not among them", () => {
    const fleet = fleetOfTen();
    const recorded = rolloutStages(fleetRollout(SPEC), fleet.list());
    const targets = recorded.stages.flatMap((stage) =>
      stage.targets.map((target) => ({
        name: target.name,
        uid: `uid-${target.name}`,
        stage: stage.name,
        progress: stage.name === "canary" ? ("done" as const) : ("pending" as const),
      })),
    );
    const started = fleetRollout(SPEC, { phase: "Progressing", state: "progressing", targets });
    const grown = new Fleet([...fleet.list(), fleetCluster("c00a", OLD)]);
    const planned = rolloutStages(started, grown.list());

    expect(planned.frozen).toBe("recorded");
    expect(planned.stages.flatMap((stage) => stage.targets.map((t) => t.name))).not.toContain("c00a");
    expect(planned.stages[0]?.targets[0]).toMatchObject({ name: "c00", progress: "done", writes: [] });
    expect(planned.stages[1]?.targets[0]?.writes).toHaveLength(2);
  });

  it("writes nothing for a Cluster that asks for the version already, nor in a run that is over", () => {
    const fleet = new Fleet([fleetCluster("a", NEW), fleetCluster("b", OLD)]);
    const planned = rolloutStages(fleetRollout({ version: NEW, canary: 1 }), fleet.list());
    expect(planned.stages.map((stage) => stage.targets.map((t) => [t.name, t.writes.length]))).toEqual([
      [["a", 0]],
      [["b", 2]],
    ]);
    const aborted = rolloutStages(fleetRollout({ version: NEW, canary: 1, abort: true }), fleet.list());
    expect(aborted.stages.flatMap((stage) => stage.targets.map((t) => t.writes.length))).toEqual([0, 0]);
  });

  it("of a settings run show each Cluster's settings now and those it would get, by hash, and the annotation naming the run", () => {
    const fleet = fleetOfTen();
    for (const name of fleet.clusters.keys()) fleet.settle(name, "ready", settingsHash({ a: 1 }));
    const config = {
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "sim" },
      spec: { backend: "simulated", settings: { a: 1 } },
    } as ProviderConfig;
    const rollout = fleetRollout({ settings: { providerConfig: "sim", patch: { b: 2 } }, canary: 1 });
    const planned = rolloutStages(rollout, fleet.list(), [fleetProfile([OLD])], config);
    expect(planned.version).toBe("ProviderConfig sim's new settings");
    expect(planned.stages.map((stage) => [stage.name, stage.targets.length])).toEqual([
      ["canary", 1],
      ["all", 9],
    ]);
    const [canary] = planned.stages[0]?.targets ?? [];
    expect(canary?.settings).toEqual({
      from: settingsHash({ a: 1 }),
      to: settingsHash(mergeSettings({ a: 1 }, { b: 2 })),
    });
    expect(canary?.writes).toEqual([
      {
        op: "add",
        path: "/metadata/annotations",
        value: {
          "engine.openmcp.cloud/changed-by-rollout": "r/rollout-uid",
          "engine.openmcp.cloud/settings-from-rollout": "r/rollout-uid",
        },
      },
    ]);
  });
});
