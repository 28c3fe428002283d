/**
 * Rollouts over random fleets where random Clusters' API servers were asked for an API the version removes: no
 * Cluster of a stage holding such a Cluster is ever asked (the stage is held whole), every stage before it finishes,
 * and the run stays Progressing with the Preflight condition naming the first held stage's first such Cluster. With
 * none such, the run succeeds. The pure step is sequenced as the runtime does, each Cluster settling between looks.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Rollout } from "../../../src/api/rollout.ts";
import type { DeprecatedApiRead } from "../../../src/machines/rollout/preflight.ts";
import { Fleet, fleetCluster, fleetRollout } from "../../support/rollout-fleet.ts";
import { fleetNames, fleetRolloutDraws, fleetStep, RUN_T0 } from "../../support/rollout-runs.ts";

const OLD = "1.36.3";
const NEW = "1.37.0";
const removed: DeprecatedApiRead = {
  kind: "read",
  apis: [
    { group: "networking.k8s.io", version: "v1beta1", resource: "servicecidrs", removedRelease: "1.37" },
  ],
};
const clean: DeprecatedApiRead = { kind: "read", apis: [] };

const scenario = fc.record({
  ...fleetRolloutDraws({ size: 25, canary: 2, maxUnavailable: 5 }, [
    { name: "quarter", share: 25 },
    { name: "rest", share: 100 },
  ]),
  /** Clusters (by index) whose API servers were asked for the removed API. */
  flagged: fc.array(fc.nat(24), { maxLength: 3 }),
});

const reached = { heldAtCanary: 0, heldLater: 0, succeeded: 0 };

describe("a Rollout over Clusters requesting an API its version removes", () => {
  it("asks no Cluster of a stage holding one, finishes the stages before it, and names the Cluster", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const names = fleetNames(s.size);
        const fleet = new Fleet(names.map((name) => fleetCluster(name, OLD)));
        const flagged = new Set(s.flagged.filter((i) => i < s.size).map((i) => names[i] ?? ""));
        const reads = new Map(names.map((name) => [`uid-${name}`, flagged.has(name) ? removed : clean]));
        let rollout: Rollout = fleetRollout({
          version: NEW,
          canary: s.canary,
          maxUnavailable: s.maxUnavailable,
          ...(s.stages ? { stages: s.stages } : {}),
        });
        for (let round = 0; round < 2 * s.size + 6; round++) {
          const nowMs = RUN_T0 + round * 1_000;
          const result = fleetStep(fleet, rollout, nowMs, [OLD, NEW], { deprecatedApis: reads });
          for (const command of result.commands) fleet.apply(command);
          for (const name of names) if (fleet.changing(name)) fleet.settle(name, "ready");
          rollout = { ...rollout, status: result.desired.status } as Rollout;
        }
        const targets = rollout.status?.targets ?? [];
        const stageOf = new Map(targets.map((t) => [t.name, t.stage]));
        const heldStages = new Set([...flagged].map((name) => stageOf.get(name)));
        const order = (rollout.status?.stages ?? []).map((stage) => stage.name);
        const firstHeld = order.findIndex((stage) => heldStages.has(stage));
        for (const name of fleet.written)
          expect(heldStages.has(stageOf.get(name)), `${name} of a held stage asked`).toBe(false);
        if (firstHeld < 0) {
          expect(rollout.status?.phase).toBe("Succeeded");
          reached.succeeded++;
          return;
        }
        // Every stage before the held one finished; nothing after it started.
        for (const target of targets) {
          const index = order.indexOf(target.stage);
          expect(target.progress, `${target.name} (${target.stage})`).toBe(
            index < firstHeld ? "done" : "pending",
          );
        }
        const stage = order[firstHeld] ?? "";
        const first = targets.find((t) => t.stage === stage && flagged.has(t.name))?.name;
        expect(rollout.status?.phase).toBe("Progressing");
        const preflight = rollout.status?.conditions?.find((c) => c.type === "Preflight");
        expect(preflight).toMatchObject({ status: "False", reason: "DeprecatedAPIsInUse" });
        expect(preflight?.message).toContain(
          `stage ${stage} blocked: DeprecatedAPIsInUse: Cluster ${first}'s API server was asked for networking.k8s.io/v1beta1 servicecidrs`,
        );
        if (firstHeld === 0 && s.canary > 0) reached.heldAtCanary++;
        else reached.heldLater++;
      }),
      { numRuns: 300 },
    );
    expect(reached.heldAtCanary).toBeGreaterThan(0);
    expect(reached.heldLater).toBeGreaterThan(0);
    expect(reached.succeeded).toBeGreaterThan(0);
  });
});
