/**
 * Rollouts on a real API server, 100 Clusters on the simulated backend: a good version passes the canary and every
 * stage in order, never more than maxUnavailable targets changing or not Ready (checked throughout by a watcher
 * of its own), each Cluster updated once and marked with the run; a version the backend fails for halts the run
 * after the canary, which alone received it, with the Cluster and its failure named. Preflight on the simulated
 * backend: a version the profile does not offer and a downgrade hold the canary with the Cluster (and profile) named;
 * the good run names the Clusters whose API servers it could not read. The rollout metrics as the engine's /metrics
 * serves them: runs by phase, a run held by reason, Clusters changed, stage durations.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CHANGED_BY_ROLLOUT_ANNOTATION, ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { silentLogger } from "../../src/api/logger.ts";
import type { Rollout, RolloutSpec } from "../../src/api/rollout.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { patchObject, removeObject } from "../../src/runtime/api-server/patch-object.ts";
import { askCluster } from "../../src/runtime/kinds/rollout/ask-cluster.ts";
import { changeOperations } from "../../src/runtime/kinds/rollout/kind.ts";
import type { CommandWriter } from "../../src/runtime/machine-kind.ts";
import { type ProbeServers, startProbeServers } from "../../src/runtime/probe-server.ts";
import { aCluster } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { sample } from "../support/prometheus-text.ts";
import { startWorld, type World } from "../support/world.ts";
import { createRollout, FAST_ROLLOUTS, readRollout } from "../support/world-rollouts.ts";

const COUNT = 100;
const OLD = "1.32.7";
const GOOD = "1.33.3";
const BAD = "1.34.1";
const MAX_UNAVAILABLE = 5;
const names = Array.from({ length: COUNT }, (_, i) => `c${String(i).padStart(3, "0")}`);

let world: World;
let probes: ProbeServers;

/** The engine's /metrics, over HTTP. */
const scrape = async () => (await fetch(`http://127.0.0.1:${probes.metricsPort}/metrics`)).text();

const listClusters = async () => world.list<Cluster>(RESOURCES.Cluster);
const readyAt = (version: string) => (cluster: Cluster) =>
  cluster.spec.kubernetes?.version === version &&
  cluster.status?.phase === "Ready" &&
  (cluster.status?.observedGeneration ?? 0) >= (cluster.metadata.generation ?? 0);
/** Changing or not Ready: what maxUnavailable bounds. */
const unavailable = (cluster: Cluster) =>
  cluster.status?.phase !== "Ready" ||
  (cluster.status?.observedGeneration ?? 0) < (cluster.metadata.generation ?? 0);

const phaseIs = (phase: string) => (rollout: Rollout | undefined) => rollout?.status?.phase === phase;

/** Aborts the rollout `name` (so it holds nothing for the runs after it) and waits until it says Aborted. */
async function abortRollout(name: string): Promise<void> {
  await world.custom.patchNamespacedCustomObject(
    { ...ROLLOUT_RESOURCE, namespace: world.namespace, name, body: { spec: { abort: true } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
  await world.waitForObject(ROLLOUT_RESOURCE, name, phaseIs("Aborted"));
}

beforeAll(async () => {
  world = await startWorld({
    backend: new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 300, failingVersions: [BAD] }),
    engine: FAST_ROLLOUTS,
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
  probes = await startProbeServers({
    metricsAddress: "127.0.0.1:0",
    healthAddress: "0",
    metrics: world.engine.metrics,
    ready: () => true,
    log: silentLogger,
  });
  for (const name of names) await world.createCluster(name, { kubernetes: { version: OLD } });
  await eventually(
    async () => satisfying(await listClusters(), (all) => all.filter(readyAt(OLD)).length === COUNT),
    { what: `${COUNT} Clusters Ready at ${OLD}`, timeoutMs: 120_000 },
  );
}, 180_000);

afterAll(async () => {
  await probes?.close();
  await world?.stop();
});

describe("a Rollout", () => {
  it("refuses a stage with both a share and a selector, and a version that is none, by CEL", async () => {
    await expect(
      createRollout(world, "bad-stage", {
        version: GOOD,
        stages: [{ name: "x", share: 10, selector: { matchLabels: { a: "b" } } }],
      }),
    ).rejects.toThrow(/exactly one of share or selector/);
    await expect(createRollout(world, "bad-version", { version: "latest" })).rejects.toThrow(/spec.version/);
  });

  it("refuses a new version for a run, and an abort taken back, by CEL", async () => {
    // Nothing selected (no Cluster has this label): the run does nothing while its spec is tried.
    await createRollout(world, "fixed", {
      version: GOOD,
      selector: { matchLabels: { none: "x" } },
      abort: true,
    });
    const patch = (spec: Partial<RolloutSpec>) =>
      world.custom.patchNamespacedCustomObject(
        { ...ROLLOUT_RESOURCE, namespace: world.namespace, name: "fixed", body: { spec } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    await expect(patch({ version: BAD })).rejects.toThrow(/spec.version cannot change/);
    await expect(patch({ abort: false })).rejects.toThrow(/cannot go back to false/);
  });

  it("holds the canary on a version its profile does not offer, naming the Cluster and the profile", async () => {
    await createRollout(world, "unoffered", { version: "1.33.9" });
    const held = await world.waitForObject<Rollout>(
      ROLLOUT_RESOURCE,
      "unoffered",
      (r) => r?.status?.conditions?.some((c) => c.type === "Preflight" && c.status === "False") === true,
      { timeoutMs: 30_000 },
    );
    expect(held?.status?.phase).toBe("Progressing");
    const condition = (type: string) => held?.status?.conditions?.find((c) => c.type === type);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "VersionNotOffered" });
    expect(condition("Preflight")?.message).toBe(
      `stage canary blocked: VersionNotOffered: Cluster c000: ClusterProfile ${world.profile} does not offer 1.33.9 (it offers ${BAD}, ${GOOD}, ${OLD})`,
    );
    expect(sample(await scrape(), "openmcp_engine_rollouts_blocked", { reason: "VersionNotOffered" })).toBe(
      1,
    );
    // Nothing was asked; abort it so that it holds nothing for the runs below.
    expect((await listClusters()).filter((c) => c.spec.kubernetes?.version !== OLD)).toEqual([]);
    await abortRollout("unoffered");
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
    await createRollout(world, "good", {
      version: GOOD,
      canary: 1,
      maxUnavailable: MAX_UNAVAILABLE,
      stages: [
        { name: "first", share: 20 },
        { name: "rest", share: 100 },
      ],
    });
    const done = await world.waitForObject(ROLLOUT_RESOURCE, "good", phaseIs("Succeeded"), {
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
    // The simulated backend gives no admin access: the checks it could not make are named, and do not block.
    const preflight = done?.status?.conditions?.find((c) => c.type === "Preflight");
    expect(preflight).toMatchObject({ status: "True", reason: "PreflightPassed" });
    expect(preflight?.message).toMatch(
      /^stage rest: nothing blocks; .*deprecated APIs not checked: backend simulated gives no admin access/,
    );

    const metrics = await scrape();
    expect(sample(metrics, "openmcp_engine_rollout_clusters_changed_total")).toBe(COUNT);
    expect(sample(metrics, "openmcp_engine_rollouts", { phase: "Succeeded" })).toBe(1);
    expect(sample(metrics, "openmcp_engine_rollouts", { phase: "Aborted" })).toBe(2); // fixed and unoffered
    expect(sample(metrics, "openmcp_engine_rollouts_blocked", { reason: "VersionNotOffered" })).toBe(0);
    // One duration per stage: canary, first, rest.
    expect(sample(metrics, "openmcp_engine_rollout_stage_duration_seconds_count")).toBe(3);
    expect(sample(metrics, "openmcp_engine_rollout_stage_duration_seconds_sum")).toBeGreaterThan(0);
  }, 300_000);

  it("holds a downgrade by its version-skew check, naming the Cluster", async () => {
    await createRollout(world, "downgrade", { version: OLD });
    const held = await world.waitForObject<Rollout>(
      ROLLOUT_RESOURCE,
      "downgrade",
      (r) => r?.status?.conditions?.some((c) => c.type === "Ready" && c.reason === "VersionSkew") === true,
      { timeoutMs: 30_000 },
    );
    expect(held?.status?.conditions?.find((c) => c.type === "Preflight")?.message).toBe(
      `stage canary blocked: VersionSkew: Cluster c000 is at ${GOOD}: ${OLD} would be a downgrade`,
    );
    await abortRollout("downgrade");
  });

  it("halts after the canary when the backend fails for the version, naming the Cluster and its failure", async () => {
    await createRollout(world, "bad", { version: BAD, canary: 1, maxUnavailable: MAX_UNAVAILABLE });
    const halted = await world.waitForObject(ROLLOUT_RESOURCE, "bad", phaseIs("Halted"), {
      timeoutMs: 60_000,
    });
    const ready = halted?.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "TargetFailed" });
    expect(ready?.message).toMatch(/^Cluster c000 failed at 1\.34\.1: /);
    // A little longer: still nothing else asked.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const asked = (await listClusters()).filter((c) => c.spec.kubernetes?.version === BAD);
    expect(asked.map((c) => c.metadata.name)).toEqual(["c000"]);
    expect(
      (await readRollout(world, "bad")).status?.targets?.filter((t) => t.progress === "failed"),
    ).toHaveLength(1);
  }, 120_000);

  it("asks a Cluster whose status or metadata moved since the look, once; not one whose spec moved", async () => {
    // Its own namespace: no run of this file selects it. The engine's Cluster machine writes its status meanwhile.
    const namespace = "asks";
    await world.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
    const writer: CommandWriter = {
      patch: (target, operations, subresource) =>
        patchObject(world.controlPlane.kubeConfig, target, operations, subresource),
      remove: (target) => removeObject(world.controlPlane.kubeConfig, target),
    };
    const ask = (looked: Cluster) =>
      askCluster({
        kubeConfig: world.controlPlane.kubeConfig,
        writer,
        namespace,
        change: {
          name: looked.metadata.name ?? "",
          uid: looked.metadata.uid ?? "",
          resourceVersion: looked.metadata.resourceVersion ?? "",
          generation: looked.metadata.generation ?? 0,
        },
        known: looked,
        operations: (fresh) => changeOperations(fresh, GOOD, "asks/run-uid"),
      });
    const read = async (name: string) =>
      (await world.read<Cluster>(RESOURCES.Cluster, name, namespace)) as Cluster;
    const mergePatch = (name: string, body: object) =>
      world.custom.patchNamespacedCustomObject(
        { ...RESOURCES.Cluster, namespace, name, body },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    for (const name of ["moved", "respecified"])
      await world.create(
        RESOURCES.Cluster,
        aCluster({ name, namespace, profile: world.profile, version: OLD }),
        namespace,
      );

    // Looked at, then its labels moved (as its status does): the write refused once is sent again over a fresh read.
    const moved = await read("moved");
    await mergePatch("moved", { metadata: { labels: { touched: "yes" } } });
    const written = await ask(moved);
    expect(written?.spec.kubernetes?.version).toBe(GOOD);
    const after = await read("moved");
    expect(after.spec.kubernetes?.version).toBe(GOOD);
    expect(after.metadata.labels?.touched).toBe("yes");
    expect(after.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBe("asks/run-uid");
    expect(after.metadata.generation).toBe((moved.metadata.generation ?? 0) + 1);

    // Looked at, then a person changed its spec: not written; the next look decides from the spec as it is.
    const respecified = await read("respecified");
    await mergePatch("respecified", { spec: { tenancy: "Exclusive" } });
    expect(await ask(respecified)).toBeUndefined();
    const untouched = await read("respecified");
    expect(untouched.spec.kubernetes?.version).toBe(OLD);
    expect(untouched.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBeUndefined();
  });
});
