/**
 * Settings Rollouts over random fleets, the pure step sequenced as the runtime does (up to three rounds of look →
 * step → each write, then the rollout's status), killed (kill -9) after any write. Each Cluster is modelled as the
 * Cluster machine and its backend treat it: its target's settings are decided by the runtime's one decision
 * (`clusterSettings`, over the rollout as stored and the ProviderConfig as stored); when they differ from what it
 * runs, it is updated (counted), and later runs them, Ready, recording their hash.
 *
 * Invariants: at every Cluster write, every target of an earlier stage runs the new settings (or is gone) — no
 * Cluster of a later stage is changed before the earlier stage is done; targets not reached run the old settings;
 * the ProviderConfig is given the settings only once every target runs them; no Cluster is written or updated twice,
 * also after the end (the config then holds what they run); a run left to settle ends Succeeded. With settings every
 * Cluster fails at, at most `canary` Clusters (`maxUnavailable` without a canary) receive them, the run halts, and
 * the config keeps its own.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import type { Rollout, RolloutSpec, RolloutTarget } from "../../../src/api/rollout.ts";
import { clusterSettings, mergeSettings, settingsHash } from "../../../src/machines/rollout/settings.ts";
import { stageNames } from "../../../src/machines/rollout/targets.ts";
import { Fleet, fleetCluster, fleetRollout } from "../../support/rollout-fleet.ts";
import {
  fleetNames,
  fleetRolloutDraws,
  fleetStep,
  killedAfter,
  RUN_T0,
  reconcileRollout,
} from "../../support/rollout-runs.ts";

const VERSION = "1.34.2";
const OLD_SETTINGS = { runtimeConfig: "", keep: "k" };
const PATCH = { runtimeConfig: "api/beta=true" };
const FROM = settingsHash(OLD_SETTINGS);
const TO = settingsHash(mergeSettings(OLD_SETTINGS, PATCH));

/** The model: the fleet, the config and the rollout as stored, updates per Cluster, and what each is updating to. */
interface World {
  readonly fleet: Fleet;
  config: ProviderConfig;
  rollout: Rollout;
  nowMs: number;
  readonly updates: Map<string, number>;
  /** Clusters being updated: to the settings of this hash. */
  readonly updating: Map<string, string>;
  /** The new settings are bad: a Cluster updated to them fails (its backend reports it failed). */
  readonly bad: boolean;
}

const runs = (world: World, name: string) =>
  world.fleet.clusters.get(name)?.status?.providerStatus?.settingsHash;

/** Runs the new settings and is Ready, or is gone. */
function finished(world: World, target: RolloutTarget): boolean {
  const cluster = world.fleet.clusters.get(target.name);
  if (!cluster || cluster.metadata.uid !== target.uid) return true;
  return (
    runs(world, target.name) === TO && cluster.status?.phase === "Ready" && !world.updating.has(target.name)
  );
}

/** The Cluster machine's look at `name`: its target's settings differ from what it runs → one update. */
function clusterLook(world: World, name: string, settle: boolean): void {
  const cluster = world.fleet.clusters.get(name);
  if (!cluster) return;
  const going = world.updating.get(name);
  if (going !== undefined) {
    if (!settle) return;
    world.updating.delete(name);
    if (world.bad && going === TO) world.fleet.settle(name, "failed");
    else world.fleet.settle(name, "ready", going);
    return;
  }
  // Failed with the settings it is given (the run's, while the run exists): it waits for a person. (Failed with
  // settings it is no longer given, it is updated: rollout-settings-give-back.property.test.ts.)
  if (cluster.status?.providerStatus?.state === "failed") return;
  const wanted = settingsHash(clusterSettings(cluster, world.config, [world.rollout]));
  if (wanted === runs(world, name)) return;
  world.updates.set(name, (world.updates.get(name) ?? 0) + 1);
  world.updating.set(name, wanted);
  world.fleet.notReady(name);
}

const checks = {
  clusterWrites: 0,
  configWrites: 0,
  killedBetweenWrites: 0,
  killedAfterConfigWrite: 0,
  paused: 0,
};

/** One reconcile as the machine controller sequences it, yielding after every write. */
function reconcile(world: World): Generator<"cluster" | "config" | "status"> {
  return reconcileRollout(
    world,
    (local) => fleetStep(world.fleet, local, world.nowMs, [VERSION], { providerConfig: world.config }),
    function* (command, step): Generator<"cluster" | "config"> {
      const targets = step.desired.status?.targets ?? [];
      const stages = stageNames(world.rollout.spec);
      if (command.kind === "applySettings") {
        for (const target of targets)
          expect(finished(world, target), `${target.name} before the config is given the settings`).toBe(
            true,
          );
        if (command.resourceVersion !== world.config.metadata.resourceVersion) return;
        world.config = {
          ...world.config,
          metadata: {
            ...world.config.metadata,
            resourceVersion: String(Number(world.config.metadata.resourceVersion) + 1),
          },
          spec: { ...world.config.spec, settings: command.settings },
        };
        checks.configWrites++;
        yield "config";
        return;
      }
      if (command.kind !== "change") return; // no snapshots before a change here
      for (const change of command.clusters) {
        const target = targets.find((t) => t.name === change.name);
        const stage = stages.indexOf(target?.stage ?? "");
        for (const other of targets) {
          const at = stages.indexOf(other.stage);
          if (at < stage) expect(finished(world, other), `${other.name} before ${change.name}`).toBe(true);
          // Not reached yet (a later stage, never written): it runs the settings it had.
          if (
            at > stage &&
            (world.fleet.writes.get(other.uid) ?? 0) === 0 &&
            world.fleet.clusters.has(other.name)
          )
            expect(runs(world, other.name), `${other.name} not reached`).toBe(FROM);
        }
        world.fleet.apply({ ...command, clusters: [change] });
        checks.clusterWrites++;
        yield "cluster";
      }
    },
  );
}

const scenario = fc.record({
  ...fleetRolloutDraws({ size: 12, canary: 2, maxUnavailable: 3 }, [
    { name: "half", share: 50 },
    { name: "rest", share: 100 },
  ]),
  rounds: fc.array(
    fc.record({
      killAfter: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      /** Per Cluster: its machine looks (≥ 5), and its update finishes (≥ 10). */
      looks: fc.array(fc.nat(20), { minLength: 12, maxLength: 12 }),
      pause: fc.nat(15),
    }),
    { minLength: 5, maxLength: 40 },
  ),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** One scenario played out; returns the world after the run was left to settle. */
function play(s: Scenario, bad: boolean): { world: World; names: string[] } {
  const names = fleetNames(s.size);
  const fleet = new Fleet(names.map((name) => fleetCluster(name, VERSION)));
  for (const name of names) fleet.settle(name, "ready", FROM);
  const spec: RolloutSpec = {
    settings: { providerConfig: "sim", patch: PATCH },
    canary: s.canary,
    maxUnavailable: s.maxUnavailable,
    ...(s.stages ? { stages: s.stages } : {}),
  };
  const world: World = {
    fleet,
    config: {
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "sim", resourceVersion: "1" },
      spec: { backend: "simulated", settings: OLD_SETTINGS },
    } as ProviderConfig,
    rollout: fleetRollout(spec),
    nowMs: RUN_T0,
    updates: new Map(),
    updating: new Map(),
    bad,
  };
  for (const round of s.rounds) {
    const paused = round.pause === 0;
    if (paused) checks.paused++;
    world.rollout = { ...world.rollout, spec: { ...spec, paused } };
    const { writes, killed } = killedAfter(reconcile(world), round.killAfter);
    if (killed && writes.at(-1) === "cluster") checks.killedBetweenWrites++;
    if (killed && writes.at(-1) === "config") checks.killedAfterConfigWrite++;
    world.nowMs += 1_000;
    names.forEach((name, i) => {
      const look = round.looks[i] ?? 0;
      if (look >= 5) clusterLook(world, name, look >= 10);
    });
  }
  // Left alone: crash-free reconciles, every Cluster's machine looking and settling.
  world.rollout = { ...world.rollout, spec };
  const over = () => ["Succeeded", "Halted"].includes(world.rollout.status?.phase ?? "");
  for (let i = 0; i < 6 * (names.length + 3) && !over(); i++) {
    for (const _ of reconcile(world));
    for (const name of names) clusterLook(world, name, true);
    world.nowMs += 1_000;
  }
  return { world, names };
}

describe("a settings Rollout over random fleets, killed between any two writes", () => {
  it("changes no Cluster of a later stage before the earlier stage is done, none twice, and gives the config the settings last", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { world, names } = play(s, false);
        expect(world.rollout.status?.phase).toBe("Succeeded");
        expect(world.config.spec.settings).toEqual(mergeSettings(OLD_SETTINGS, PATCH));
        // After the end: the Clusters' machines look again, and find nothing to update.
        for (let i = 0; i < 2; i++) for (const name of names) clusterLook(world, name, true);
        for (const name of names) {
          expect(world.updates.get(name), `updates of ${name}`).toBe(1);
          expect(world.fleet.writes.get(`uid-${name}`), `writes of ${name}`).toBe(1);
          expect(runs(world, name)).toBe(TO);
        }
      }),
      { numRuns: 500 },
    );
    // The interesting branches were reached.
    expect(checks.clusterWrites).toBeGreaterThan(500);
    expect(checks.configWrites).toBeGreaterThan(100);
    expect(checks.killedBetweenWrites).toBeGreaterThan(20);
    expect(checks.killedAfterConfigWrite).toBeGreaterThan(5);
    expect(checks.paused).toBeGreaterThan(20);
  });

  it("halts on settings every Cluster fails at, given to at most the canary, the config keeping its own", () => {
    let haltedAtTheCanary = 0;
    fc.assert(
      fc.property(scenario, (s) => {
        const { world, names } = play(s, true);
        expect(world.rollout.status?.phase).toBe("Halted");
        expect(world.rollout.status?.conditions?.find((c) => c.type === "Ready")?.reason).toBe(
          "TargetFailed",
        );
        const written = names.filter((name) => (world.fleet.writes.get(`uid-${name}`) ?? 0) > 0);
        expect(written.length).toBeLessThanOrEqual(s.canary > 0 ? s.canary : s.maxUnavailable);
        if (s.canary > 0) haltedAtTheCanary++;
        for (const name of names) expect(world.updates.get(name) ?? 0).toBeLessThanOrEqual(1);
        expect(world.config.spec.settings).toEqual(OLD_SETTINGS);
      }),
      { numRuns: 300 },
    );
    expect(haltedAtTheCanary).toBeGreaterThan(100);
  });
});
