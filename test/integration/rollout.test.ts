/**
 * Rollouts on a real API server, 100 Clusters on the simulated backend: a good version passes the canary and every
 * stage in order, never more than maxUnavailable targets changing or not Ready (checked throughout by a watcher
 * of its own), each Cluster updated once and marked with the run; a version the backend fails for halts the run
 * after the canary, which alone received it, with the Cluster and its failure named.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CHANGED_BY_ROLLOUT_ANNOTATION, ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { Rollout, RolloutSpec } from "../../src/api/rollout.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { startWorld, type World } from "../support/world.ts";

const COUNT = 100;
const OLD = "1.32.7";
const GOOD = "1.33.3";
const BAD = "1.34.1";
const MAX_UNAVAILABLE = 5;
const names = Array.from({ length: COUNT }, (_, i) => `c${String(i).padStart(3, "0")}`);

let world: World;

const listClusters = async () => world.list<Cluster>(RESOURCES.Cluster);
const readyAt = (version: string) => (cluster: Cluster) =>
  cluster.spec.kubernetes?.version === version &&
  cluster.status?.phase === "Ready" &&
  (cluster.status?.observedGeneration ?? 0) >= (cluster.metadata.generation ?? 0);
/** Changing or not Ready: what maxUnavailable bounds. */
const unavailable = (cluster: Cluster) =>
  cluster.status?.phase !== "Ready" ||
  (cluster.status?.observedGeneration ?? 0) < (cluster.metadata.generation ?? 0);

const readRollout = async (name: string) =>
  (await world.custom.getNamespacedCustomObject({
    ...ROLLOUT_RESOURCE,
    namespace: world.namespace,
    name,
  })) as Rollout;

const createRollout = (name: string, spec: RolloutSpec) =>
  world.custom.createNamespacedCustomObject({
    ...ROLLOUT_RESOURCE,
    namespace: world.namespace,
    body: { apiVersion: "engine.openmcp.cloud/v1alpha1", kind: "Rollout", metadata: { name }, spec },
  });

const phaseIs = (phase: string) => (rollout: Rollout | undefined) => rollout?.status?.phase === phase;

beforeAll(async () => {
  world = await startWorld({
    backend: new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 300, failingVersions: [BAD] }),
    engine: { kindSettings: { Rollout: { timing: { pollMs: 200, retryMs: 500, resyncMs: 60_000 } } } },
  });
  // The world's profile offers one more version: the one the backend fails for.
  await world.custom.patchClusterCustomObject(
    {
      ...RESOURCES.ClusterProfile,
      name: world.profile,
      body: { spec: { supportedVersions: [{ version: BAD }, { version: GOOD }, { version: OLD }] } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  for (const name of names) await world.createCluster(name, { kubernetes: { version: OLD } });
  await eventually(
    async () => satisfying(await listClusters(), (all) => all.filter(readyAt(OLD)).length === COUNT),
    { what: `${COUNT} Clusters Ready at ${OLD}`, timeoutMs: 120_000 },
  );
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

describe("a Rollout", () => {
  it("refuses a stage with both a share and a selector, and a version that is none, by CEL", async () => {
    await expect(
      createRollout("bad-stage", {
        version: GOOD,
        stages: [{ name: "x", share: 10, selector: { matchLabels: { a: "b" } } }],
      }),
    ).rejects.toThrow(/exactly one of share or selector/);
    await expect(createRollout("bad-version", { version: "latest" })).rejects.toThrow(/spec.version/);
  });

  it("refuses a new version for a run, and an abort taken back, by CEL", async () => {
    // Nothing selected (no Cluster has this label): the run does nothing while its spec is tried.
    await createRollout("fixed", { version: GOOD, selector: { matchLabels: { none: "x" } }, abort: true });
    const patch = (spec: Partial<RolloutSpec>) =>
      world.custom.patchNamespacedCustomObject(
        { ...ROLLOUT_RESOURCE, namespace: world.namespace, name: "fixed", body: { spec } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    await expect(patch({ version: BAD })).rejects.toThrow(/spec.version cannot change/);
    await expect(patch({ abort: false })).rejects.toThrow(/cannot go back to false/);
  });

  it("brings a good version to 100 Clusters: canary alone, then the stages in order, within maxUnavailable", async () => {
    let worst = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const clusters = await listClusters();
        worst = Math.max(worst, clusters.filter(unavailable).length);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await createRollout("good", {
      version: GOOD,
      canary: 1,
      maxUnavailable: MAX_UNAVAILABLE,
      stages: [
        { name: "first", share: 20 },
        { name: "rest", share: 100 },
      ],
    });
    const done = await eventually(async () => satisfying(await readRollout("good"), phaseIs("Succeeded")), {
      what: "rollout good Succeeded",
      timeoutMs: 240_000,
    });
    watching = false;
    await watcher;
    expect(worst).toBeGreaterThan(1); // it did run several at once
    expect(worst).toBeLessThanOrEqual(MAX_UNAVAILABLE);

    const targets = done?.status?.targets ?? [];
    expect(targets).toHaveLength(COUNT);
    expect(done?.status?.stages?.map((s) => [s.name, s.targets, s.done])).toEqual([
      ["canary", 1, 1],
      ["first", 20, 20],
      ["rest", 79, 79],
    ]);
    // Stages in order: no Cluster of a stage was asked before every Cluster of the one before was done.
    const ms = (time: string | undefined) => Date.parse(time ?? "");
    const order = ["canary", "first", "rest"];
    for (let i = 1; i < order.length; i++) {
      const lastDone = Math.max(...targets.filter((t) => t.stage === order[i - 1]).map((t) => ms(t.doneAt)));
      const firstAsked = Math.min(...targets.filter((t) => t.stage === order[i]).map((t) => ms(t.changedAt)));
      expect(firstAsked).toBeGreaterThanOrEqual(lastDone);
    }
    const clusters = await listClusters();
    const uid = done?.metadata.uid;
    for (const cluster of clusters) {
      expect(readyAt(GOOD)(cluster)).toBe(true);
      expect(cluster.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBe(`good/${uid}`);
      expect(world.callsAbout("update", `${world.namespace}/${cluster.metadata.name}`)).toBe(1);
    }
    expect(done?.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "Ready", status: "True", reason: "Succeeded" }),
      ]),
    );
  }, 300_000);

  it("halts after the canary when the backend fails for the version, naming the Cluster and its failure", async () => {
    await createRollout("bad", { version: BAD, canary: 1, maxUnavailable: MAX_UNAVAILABLE });
    const halted = await eventually(async () => satisfying(await readRollout("bad"), phaseIs("Halted")), {
      what: "rollout bad Halted",
      timeoutMs: 60_000,
    });
    const ready = halted?.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "TargetFailed" });
    expect(ready?.message).toMatch(/^Cluster c000 failed at 1\.34\.1: /);
    // A little longer: still nothing else asked.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const asked = (await listClusters()).filter((c) => c.spec.kubernetes?.version === BAD);
    expect(asked.map((c) => c.metadata.name)).toEqual(["c000"]);
    expect((await readRollout("bad")).status?.targets?.filter((t) => t.progress === "failed")).toHaveLength(
      1,
    );
  }, 120_000);
});
