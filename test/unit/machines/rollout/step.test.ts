/**
 * The Rollout step: the freeze, the canary alone first, stages in order, maxUnavailable, gates, halt, pause, abort;
 * a settings run (the run named on its Clusters, done when they run the settings, the config given them last).
 */
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../../../src/api/provider-config.ts";
import type { Rollout, RolloutSpec } from "../../../../src/api/rollout.ts";
import { explainRollout } from "../../../../src/machines/rollout/definition.ts";
import { mergeSettings, settingsHash } from "../../../../src/machines/rollout/settings.ts";
import { stepRollout } from "../../../../src/machines/rollout/step.ts";
import { freezeTargets } from "../../../../src/machines/rollout/targets.ts";
import {
  FLEET_NAMESPACE,
  Fleet,
  fleetCluster,
  fleetProfile,
  fleetRollout,
} from "../../../support/rollout-fleet.ts";
import { RUN_T0, RUN_TIMING } from "../../../support/rollout-runs.ts";

const OLD = "1.33.6";
const NEW = "1.34.2";

const fleetOf = (count: number) =>
  new Fleet(Array.from({ length: count }, (_, i) => fleetCluster(`c${String(i).padStart(2, "0")}`, OLD)));

/** One step at `nowMs` over the fleet; its commands applied, its status kept (as the runtime does). */
function stepOnce(fleet: Fleet, rollout: Rollout, nowMs = RUN_T0) {
  const result = stepRollout({
    object: rollout,
    clusters: fleet.list(),
    profiles: [fleetProfile([OLD, NEW])],
    now: new Date(nowMs).toISOString(),
    nowMs,
    timing: RUN_TIMING,
  });
  for (const command of result.commands) fleet.apply(command);
  const next = { ...rollout, status: result.desired.status } as Rollout;
  return { result, rollout: next };
}

const spec = (more: Partial<RolloutSpec> = {}): RolloutSpec => ({ version: NEW, ...more });

describe("the freeze", () => {
  it("puts the first names in the canary, then each stage its share (rounded up) and the rest in the last", () => {
    const fleet = fleetOf(10);
    const targets = freezeTargets(
      spec({
        canary: 1,
        stages: [
          { name: "early", share: 25 },
          { name: "late", share: 10 },
        ],
      }),
      FLEET_NAMESPACE,
      fleet.list(),
      [],
    );
    const count = (stage: string) => targets.filter((t) => t.stage === stage).length;
    expect([count("canary"), count("early"), count("late")]).toEqual([1, 3, 6]);
    expect(targets[0]).toEqual({ name: "c00", uid: "uid-c00", stage: "canary", progress: "pending" });
  });

  it("places a stage by label among the targets no earlier stage holds", () => {
    const fleet = new Fleet([
      fleetCluster("a", OLD),
      fleetCluster("b", OLD, { ring: "1" }),
      fleetCluster("c", OLD),
    ]);
    const targets = freezeTargets(
      spec({
        canary: 0,
        stages: [
          { name: "ring1", selector: { matchLabels: { ring: "1" } } },
          { name: "rest", share: 100 },
        ],
      }),
      FLEET_NAMESPACE,
      fleet.list(),
      [],
    );
    expect(targets.map((t) => [t.name, t.stage])).toEqual([
      ["a", "rest"],
      ["b", "ring1"],
      ["c", "rest"],
    ]);
  });
});

describe("a Rollout step", () => {
  it("freezes the set, asks the canary alone first and records which run changed it", () => {
    const fleet = fleetOf(5);
    const { result } = stepOnce(fleet, fleetRollout(spec({ maxUnavailable: 3 })));
    expect(result.state).toBe("progressing");
    expect(result.commands).toEqual([
      {
        kind: "change",
        version: NEW,
        changedBy: "r/rollout-uid",
        settings: false,
        clusters: [{ name: "c00", uid: "uid-c00", resourceVersion: "1", generation: 1 }],
      },
    ]);
    expect(fleet.clusters.get("c00")?.spec.kubernetes?.version).toBe(NEW);
    expect(fleet.clusters.get("c00")?.metadata.annotations?.["engine.openmcp.cloud/changed-by-rollout"]).toBe(
      "r/rollout-uid",
    );
    expect(result.desired.status).toMatchObject({ phase: "Progressing", currentStage: "canary" });
    expect(result.desired.status?.targets).toHaveLength(5);
    expect(result.events.map((e) => e.reason)).toEqual(["Started", "StageStarted", "ClustersChanged"]);
  });

  it("never asks a Cluster twice: a look that finds it asked (the status not yet written) takes it as changing", () => {
    const fleet = fleetOf(3);
    const first = stepOnce(fleet, fleetRollout(spec()));
    // The status write was lost (kill -9): the next look starts from the original object again.
    const again = stepOnce(fleet, fleetRollout(spec()));
    expect(first.result.commands).toHaveLength(1);
    expect(again.result.commands).toEqual([]);
    expect(again.result.desired.status?.targets?.[0]).toMatchObject({ name: "c00", progress: "changing" });
    expect(fleet.writes.get("uid-c00")).toBe(1);
  });

  it("goes stage by stage within maxUnavailable and succeeds", () => {
    const fleet = fleetOf(7);
    let rollout = fleetRollout(
      spec({
        maxUnavailable: 2,
        stages: [
          { name: "half", share: 50 },
          { name: "rest", share: 50 },
        ],
      }),
    );
    for (let look = 0; look < 40 && rollout.status?.state !== "succeeded"; look++) {
      ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + look * 1_000));
      const changing = fleet.list().filter((c) => fleet.changing(c.metadata.name ?? ""));
      expect(changing.length).toBeLessThanOrEqual(2);
      for (const cluster of changing) fleet.settle(cluster.metadata.name ?? "", "ready");
    }
    expect(rollout.status?.phase).toBe("Succeeded");
    expect(fleet.written).toEqual(["c00", "c01", "c02", "c03", "c04", "c05", "c06"]);
    expect(rollout.status?.stages?.map((s) => [s.name, s.done])).toEqual([
      ["canary", 1],
      ["half", 4],
      ["rest", 2],
    ]);
  });

  it("halts at a canary that fails at the new version, naming it; nothing else is asked", () => {
    const fleet = fleetOf(4);
    let { rollout } = stepOnce(fleet, fleetRollout(spec({ maxUnavailable: 4 })));
    fleet.settle("c00", "failed");
    const halted = stepOnce(fleet, rollout, RUN_T0 + 1_000);
    rollout = halted.rollout;
    expect(rollout.status?.phase).toBe("Halted");
    const ready = rollout.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "TargetFailed" });
    expect(ready?.message).toContain("Cluster c00 failed at 1.34.2");
    expect(halted.result.events).toEqual([
      expect.objectContaining({ type: "Warning", reason: "TargetFailed" }),
    ]);
    expect(stepOnce(fleet, rollout, RUN_T0 + 2_000).result.commands).toEqual([]);
    expect(fleet.written).toEqual(["c00"]);
  });

  it("halts when a changed Cluster is not Ready within timeoutSeconds", () => {
    const fleet = fleetOf(2);
    let { rollout } = stepOnce(fleet, fleetRollout(spec({ timeoutSeconds: 60 })));
    ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + 1_000)); // sees it asked: changing since now
    ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + 62_000));
    expect(rollout.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "TargetTimedOut",
    });
  });

  it("skips a target deleted meanwhile and never includes a Cluster made after the start", () => {
    const fleet = fleetOf(2);
    let { rollout } = stepOnce(fleet, fleetRollout(spec({ canary: 0, maxUnavailable: 5 })));
    fleet.remove("c01");
    fleet.clusters.set("new", fleetCluster("new", OLD));
    fleet.settle("c00", "ready");
    ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + 1_000));
    ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + 2_000));
    expect(rollout.status?.phase).toBe("Succeeded");
    expect(rollout.status?.targets?.map((t) => [t.name, t.progress])).toEqual([
      ["c00", "done"],
      ["c01", "skipped"],
    ]);
    expect(fleet.clusters.get("new")?.spec.kubernetes?.version).toBe(OLD);
  });

  it("waits readyForSeconds after a stage and for the approval of the next", () => {
    const fleet = fleetOf(3);
    const gated = spec({ gates: { readyForSeconds: 30, approval: true } });
    let { rollout, result } = stepOnce(fleet, fleetRollout(gated));
    expect(result.commands).toEqual([]);
    expect(rollout.status?.conditions?.[0]?.message).toContain("approve-stage: canary");
    const approve = (stage: string) => {
      rollout = {
        ...rollout,
        metadata: { ...rollout.metadata, annotations: { "engine.openmcp.cloud/approve-stage": stage } },
      };
    };
    approve("canary");
    ({ rollout, result } = stepOnce(fleet, rollout, RUN_T0 + 1_000));
    expect(fleet.written).toEqual(["c00"]);
    fleet.settle("c00", "ready");
    ({ rollout } = stepOnce(fleet, rollout, RUN_T0 + 2_000)); // done at RUN_T0 + 2 s
    approve("all");
    ({ rollout, result } = stepOnce(fleet, rollout, RUN_T0 + 20_000));
    expect(result.commands).toEqual([]);
    expect(rollout.status?.conditions?.[0]?.message).toContain("readyForSeconds");
    ({ rollout, result } = stepOnce(fleet, rollout, RUN_T0 + 33_000));
    expect(fleet.written).toEqual(["c00", "c01"]);
  });

  it("waits for notBefore, asks nothing while paused, and stays aborted", () => {
    const fleet = fleetOf(3);
    const later = spec({ gates: { notBefore: "2026-11-28T13:00:00Z" } });
    let { rollout, result } = stepOnce(fleet, fleetRollout(later));
    expect(rollout.status).toMatchObject({ phase: "Pending" });
    expect(rollout.status?.targets).toBeUndefined();
    expect(result.requeueAfterMs).toBe(RUN_TIMING.resyncMs); // an hour away: the resync comes first
    ({ rollout } = stepOnce(fleet, { ...rollout, spec: { ...later, paused: true } }, RUN_T0 + 3_600_000));
    expect(rollout.status?.phase).toBe("Paused");
    expect(fleet.written).toEqual([]);
    ({ rollout } = stepOnce(fleet, { ...rollout, spec: { ...later, abort: true } }, RUN_T0 + 3_601_000));
    expect(rollout.status?.phase).toBe("Aborted");
    ({ rollout, result } = stepOnce(fleet, { ...rollout, spec: later }, RUN_T0 + 3_602_000));
    expect(rollout.status?.phase).toBe("Aborted");
    expect(fleet.written).toEqual([]);
  });

  it("is explained from its status: the verdict, each stage's counts, and what it waits for", () => {
    const fleet = fleetOf(3);
    const { rollout } = stepOnce(fleet, fleetRollout(spec({ gates: { approval: true } })));
    const explained = explainRollout(rollout);
    expect(explained.state).toBe("progressing");
    expect(explained.why).toContain("stage canary: 0/1 done, 0 changing, 0 failed, 0 skipped");
    expect(explained.waitingFor).toEqual([
      "waiting for stage canary: approval (annotation engine.openmcp.cloud/approve-stage: canary)",
    ]);
  });
});

describe("a settings Rollout step", () => {
  const OLD_SETTINGS = { runtimeConfig: "", token: "s3cr3t-value" };
  const PATCH = { runtimeConfig: "api/beta=true" };
  const FROM = settingsHash(OLD_SETTINGS);
  const TO = settingsHash(mergeSettings(OLD_SETTINGS, PATCH));
  const config = (settings = OLD_SETTINGS): ProviderConfig =>
    ({
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "sim", resourceVersion: "7" },
      spec: { backend: "simulated", settings },
    }) as ProviderConfig;
  const settingsSpec: RolloutSpec = {
    settings: { providerConfig: "sim", patch: PATCH },
    canary: 1,
    maxUnavailable: 2,
  };
  const settingsFleet = () => {
    const fleet = fleetOf(3);
    for (const name of fleet.clusters.keys()) fleet.settle(name, "ready", FROM);
    return fleet;
  };
  const step = (fleet: Fleet, rollout: Rollout, providerConfig?: ProviderConfig, refused?: string) => {
    const result = stepRollout({
      object: rollout,
      clusters: fleet.list(),
      profiles: [fleetProfile([OLD])],
      ...(providerConfig ? { providerConfig } : {}),
      ...(refused ? { settingsRefused: refused } : {}),
      now: new Date(RUN_T0).toISOString(),
      nowMs: RUN_T0,
      timing: RUN_TIMING,
    });
    for (const command of result.commands) fleet.apply(command);
    return { result, rollout: { ...rollout, status: result.desired.status } as Rollout };
  };

  it("names the run on the canary alone (no version), says from and to by hash, and never a value", () => {
    const fleet = settingsFleet();
    const { result, rollout } = step(fleet, fleetRollout(settingsSpec), config());
    expect(result.commands).toEqual([
      {
        kind: "change",
        changedBy: "r/rollout-uid",
        settings: true,
        clusters: [{ name: "c00", uid: "uid-c00", resourceVersion: "2", generation: 1 }],
      },
    ]);
    const c00 = fleet.clusters.get("c00");
    expect(c00?.metadata.annotations?.["engine.openmcp.cloud/settings-from-rollout"]).toBe("r/rollout-uid");
    expect(c00?.spec.kubernetes?.version).toBe(OLD);
    expect(rollout.status?.settings).toEqual({ providerConfig: "sim", from: FROM, to: TO });
    const said = JSON.stringify([rollout.status, result.events]);
    expect(said).not.toContain("s3cr3t-value");
    expect(said).not.toContain("api/beta=true");
    expect(result.events.find((e) => e.reason === "ClustersChanged")?.message).toBe(
      `stage canary: asked 1 Cluster for settings ${FROM} → ${TO}: c00`,
    );
  });

  it("takes a Cluster as done only once it runs the new settings, then goes on; at the end gives the config them", () => {
    const fleet = settingsFleet();
    let { rollout } = step(fleet, fleetRollout(settingsSpec), config());
    // Ready still, with the old settings (its machine has not updated it yet): changing, nothing more asked.
    ({ rollout } = step(fleet, rollout, config()));
    expect(rollout.status?.targets?.map((t) => t.progress)).toEqual(["changing", "pending", "pending"]);
    fleet.settle("c00", "ready", TO);
    ({ rollout } = step(fleet, rollout, config()));
    expect(rollout.status?.targets?.[0]).toMatchObject({ progress: "done", settingsHash: TO });
    expect(fleet.written).toEqual(["c00", "c01", "c02"]);
    fleet.settle("c01", "ready", TO);
    fleet.settle("c02", "ready", TO);
    let result: ReturnType<typeof step>["result"];
    ({ rollout, result } = step(fleet, rollout, config()));
    expect(result.state).toBe("applying");
    expect(result.commands).toEqual([
      {
        kind: "applySettings",
        providerConfig: "sim",
        settings: mergeSettings(OLD_SETTINGS, PATCH),
        resourceVersion: "7",
      },
    ]);
    expect(result.events.map((e) => e.reason)).toEqual(["SettingsApplied"]);
    // Killed before the config write: asked again. Once the config holds them: Succeeded, nothing more.
    ({ result } = step(fleet, rollout, config()));
    expect(result.commands.map((c) => c.kind)).toEqual(["applySettings"]);
    ({ rollout, result } = step(
      fleet,
      rollout,
      config(mergeSettings(OLD_SETTINGS, PATCH) as typeof OLD_SETTINGS),
    ));
    expect(result.commands).toEqual([]);
    expect(rollout.status?.phase).toBe("Succeeded");
    expect(rollout.status?.settings).toMatchObject({
      from: FROM,
      to: TO,
      appliedAt: new Date(RUN_T0).toISOString(),
    });
  });

  it("holds at the start, changing nothing, while its ProviderConfig is missing or its settings are refused", () => {
    const fleet = settingsFleet();
    const missing = step(fleet, fleetRollout(settingsSpec));
    expect(missing.rollout.status?.phase).toBe("Pending");
    expect(missing.rollout.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ProviderConfigNotFound",
    });
    const refused = step(fleet, fleetRollout(settingsSpec), config(), 'runtimeConfig "x" must be …');
    expect(refused.rollout.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "SettingsRefused",
      message: `the backend of ProviderConfig sim refuses the new settings: runtimeConfig "x" must be …; nothing is changed`,
    });
    expect(fleet.written).toEqual([]);
  });

  it("targets only the Clusters of its ProviderConfig's profiles", () => {
    const fleet = settingsFleet();
    const other = {
      ...fleetProfile([OLD]),
      metadata: { name: "p" },
      spec: { ...fleetProfile([OLD]).spec, providerConfigRef: { name: "other" } },
    };
    expect(freezeTargets(settingsSpec, FLEET_NAMESPACE, fleet.list(), [other])).toEqual([]);
    expect(freezeTargets(settingsSpec, FLEET_NAMESPACE, fleet.list(), [fleetProfile([OLD])])).toHaveLength(3);
  });
});
