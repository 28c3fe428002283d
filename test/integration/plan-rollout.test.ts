/**
 * `openmcp-engine plan` of a Rollout on a real API server: the run's stages, each with its Clusters in the order
 * they would be asked (the canary first) and what each would get, in text and in JSON; then the Rollout applied for
 * real, and the engine's run asks exactly those Clusters in those stages, stage after stage. Planned again once the
 * run is over, nothing more would be written.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CHANGED_BY_ROLLOUT_ANNOTATION, ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { planCommand } from "../../src/cli/plan.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import type { Plan, PlannedRollout } from "../../src/runtime/plan/plan.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { startPlanWorld, stopPlanWorld } from "../support/plan-world.ts";
import { ringOneFirst } from "../support/rollout-fleet.ts";
import type { World } from "../support/world.ts";
import { FAST_ROLLOUTS, rolloutWhere } from "../support/world-rollouts.ts";

const OLD = "1.32.7";
const NEW = "1.33.3";
/** Six Clusters; b and e in ring 1. */
const NAMES = ["a", "b", "c", "d", "e", "f"];
const SPEC = ringOneFirst(NEW);

let world: World;
let state: string;
let engineArgs: string[];

beforeAll(async () => {
  ({ world, state, engineArgs } = await startPlanWorld("plan-rollout-", () => ({
    backend: new SimulatedBackend({ provisionDelayMs: 0, updateDelayMs: 0, deleteDelayMs: 0 }),
    engine: FAST_ROLLOUTS,
  })));
  for (const name of NAMES)
    await world.createCluster(
      name,
      { kubernetes: { version: OLD } },
      name === "b" || name === "e" ? { labels: { ring: "1" } } : {},
    );
  await eventually(
    async () =>
      satisfying(await world.list<Cluster>(RESOURCES.Cluster), (all) =>
        NAMES.every((name) => all.some((c) => c.metadata.name === name && c.status?.phase === "Ready")),
      ),
    { what: "every Cluster Ready", timeoutMs: 60_000 },
  );
}, 120_000);

afterAll(() => stopPlanWorld({ world, state }));

const manifest = {
  apiVersion: "engine.openmcp.cloud/v1alpha1",
  kind: "Rollout",
  metadata: { name: "to-new", namespace: "clusters" },
  spec: SPEC,
};

/** `plan -f` of the Rollout's manifest, in JSON and in text. */
async function planned(labels: Record<string, string> = {}): Promise<{ json: Plan; text: string }> {
  const file = join(state, "rollout.json");
  await writeFile(file, JSON.stringify({ ...manifest, metadata: { ...manifest.metadata, labels } }));
  const out: string[] = [];
  const json = await planCommand(["-f", file, "-o", "json", ...engineArgs], (text) => out.push(text));
  expect(JSON.parse(out.join("\n"))).toEqual(JSON.parse(JSON.stringify(json)));
  const lines: string[] = [];
  await planCommand(["-f", file, ...engineArgs], (text) => lines.push(text));
  process.exitCode = 0;
  return { json, text: lines.join("\n") };
}

const stagesOf = (rollout: PlannedRollout | undefined) =>
  rollout?.stages.map((stage) => [stage.name, stage.targets.map((target) => target.name)]);

describe("plan of a Rollout", () => {
  it("shows its stages and what each Cluster would get, and the run then asks those Clusters in that order", async () => {
    const { json, text } = await planned();
    const object = json.objects.find((o) => o.kind === "Rollout");
    expect(object).toMatchObject({ change: "create", outcome: "awaitsCommands" });
    expect(object?.rollout?.frozen).toBe("now");
    expect(stagesOf(object?.rollout)).toEqual([
      ["canary", ["a"]],
      ["ring1", ["b", "e"]],
      ["rest", ["c", "d", "f"]],
    ]);
    for (const target of object?.rollout?.stages.flatMap((stage) => stage.targets) ?? []) {
      expect(target).toMatchObject({ from: OLD, to: NEW, progress: "pending" });
      expect(target.writes).toContainEqual({ op: "add", path: "/spec/kubernetes/version", value: NEW });
    }
    // The step the plan takes asks the canary alone: the first stage.
    expect(object?.steps[0]?.commands.map((c) => c.command)).toMatchObject([
      { kind: "change", version: NEW, clusters: [{ name: "a" }] },
    ]);
    expect(text).toContain(
      `its run to ${NEW}: 6 Clusters as it would freeze them now, in stages\n` +
        "      1. canary\n" +
        `         a  ${OLD} → ${NEW}\n` +
        "      2. ring1\n" +
        `         b  ${OLD} → ${NEW}\n` +
        `         e  ${OLD} → ${NEW}\n` +
        "      3. rest\n",
    );

    // Applied for real: the engine freezes the same stages and asks each Cluster after every one of the stage before.
    await world.custom.createNamespacedCustomObject({
      ...ROLLOUT_RESOURCE,
      namespace: world.namespace,
      body: manifest,
    });
    const done = await rolloutWhere(
      world,
      "to-new",
      "the Rollout Succeeded",
      (rollout) => rollout.status?.phase === "Succeeded",
    );
    const byStage = (done.status?.stages ?? []).map((stage) => [
      stage.name,
      (done.status?.targets ?? []).filter((t) => t.stage === stage.name).map((t) => t.name),
    ]);
    expect(byStage).toEqual(stagesOf(object?.rollout));
    const changedAt = new Map(
      (done.status?.targets ?? []).map((t) => [t.name, Date.parse(t.changedAt ?? "")]),
    );
    const doneAt = new Map((done.status?.targets ?? []).map((t) => [t.name, Date.parse(t.doneAt ?? "")]));
    const stages = object?.rollout?.stages ?? [];
    for (let i = 1; i < stages.length; i++)
      for (const later of stages[i]?.targets ?? [])
        for (const earlier of stages[i - 1]?.targets ?? [])
          expect(changedAt.get(later.name)).toBeGreaterThanOrEqual(doneAt.get(earlier.name) ?? Infinity);
    for (const cluster of await world.list<Cluster>(RESOURCES.Cluster)) {
      expect(cluster.spec.kubernetes?.version).toBe(NEW);
      expect(cluster.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBe(
        `to-new/${done.metadata.uid}`,
      );
    }

    // Planned again (a label added) once the run is over: its recorded targets, each done, nothing to write.
    const again = (await planned({ team: "a" })).json.objects.find((o) => o.kind === "Rollout");
    expect(again).toMatchObject({ change: "update", outcome: "settled" });
    expect(again?.rollout?.frozen).toBe("recorded");
    expect(stagesOf(again?.rollout)).toEqual(stagesOf(object?.rollout));
    for (const target of again?.rollout?.stages.flatMap((stage) => stage.targets) ?? [])
      expect(target).toMatchObject({ from: NEW, progress: "done", writes: [] });
  }, 120_000);
});
