/**
 * A Cluster a settings Rollout reached, whose new settings it may fail with, and the Rollout deleted at a random
 * moment: the Cluster's real pure step (`stepCluster`, its writes applied as the runtime applies them) with its
 * settings decided by the runtime's one decision (`clusterSettings`) over the Rollouts that exist, against a backend
 * modelled as `local` behaves: it records the settings it was last given; an update to other settings restarts it
 * (`provisioning` for a few looks), then it is ready, or failed when the settings are bad (between retries it may say
 * `provisioning` again); `outOfDate` whenever what it records differs from its target's (ready or failed).
 *
 * Invariants: no update is ordered that changes nothing at the backend (no update loop); while the run exists, a
 * Cluster that failed with its settings is left failed (a halted canary stays for a person to look at); once the run
 * is deleted, every Cluster — failed with its settings or not — is given its config's settings back with one update
 * and ends Ready, recording their hash. So at most two updates: the run's and the give-back.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import type { JsonObject } from "../../../src/api/common.ts";
import { SETTINGS_FROM_ROLLOUT_ANNOTATION } from "../../../src/api/constants/rollout.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import type { Rollout } from "../../../src/api/rollout.ts";
import {
  clusterSettings,
  mergeSettings,
  runName,
  settingsHash,
} from "../../../src/machines/rollout/settings.ts";
import { aCluster, input, readyAt } from "../../support/cluster-fixtures.ts";
import { afterWrites, stepClusterWrites } from "../../support/step-writes.ts";

const VERSION = "1.33.3";
const OWN = { runtimeConfig: "" };
const CONFIG = {
  apiVersion: "engine.openmcp.cloud/v1alpha1",
  kind: "ProviderConfig",
  metadata: { name: "sim" },
  spec: { backend: "simulated", settings: OWN },
} as ProviderConfig;
const FROM = settingsHash(OWN);

/** The backend's one cluster: the settings (by hash) it records, its phase, looks left of a restart. */
interface Backend {
  recorded: string;
  phase: "ready" | "restarting" | "failed";
  restartLooks: number;
  bad: string;
}

function observe(backend: Backend, target: string, retrying: boolean): ClusterObservation {
  const outOfDate = backend.recorded !== target ? { outOfDate: true } : {};
  if (backend.phase === "ready") return { ...readyAt(VERSION), ...outOfDate } as ClusterObservation;
  if (backend.phase === "restarting" || retrying)
    return { exists: true, phase: "provisioning", version: VERSION, message: "its processes are starting" };
  return { exists: true, phase: "failed", version: VERSION, message: "kube-apiserver exited", ...outOfDate };
}

/** A look passes: a restart goes on, and ends ready or failed by the settings it starts with. */
function tick(backend: Backend): void {
  if (backend.phase !== "restarting") return;
  if (--backend.restartLooks > 0) return;
  backend.phase = backend.recorded === backend.bad ? "failed" : "ready";
}

const scenario = fc.record({
  bad: fc.boolean(),
  /** Looks before the run reaches the Cluster, and after that before the run is deleted. */
  before: fc.nat(3),
  untilDeleted: fc.nat(12),
  restartLooks: fc.integer({ min: 1, max: 4 }),
  /** Per look: a failed backend retrying its start says `provisioning`. */
  retrying: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
  /** A look that goes wrong: the engine's update command fails (the backend is not changed; it is ordered again). */
  commandFails: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
});

const reached = {
  failedWhileTheRunExisted: 0,
  failedThenGivenBack: 0,
  commandFailed: 0,
  givenBackReady: 0,
};

describe("a Cluster a settings Rollout reached, the Rollout then deleted", () => {
  it("is left failed while the run exists, and given its config's settings back once it is deleted", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const patch: JsonObject = { runtimeConfig: s.bad ? "nosuch.example.com/v1=true" : "api/beta=true" };
        const base = aCluster({ version: VERSION });
        const rollout = {
          apiVersion: "engine.openmcp.cloud/v1alpha1",
          kind: "Rollout",
          metadata: { name: "r", namespace: base.metadata.namespace, uid: "rollout-uid", generation: 1 },
          spec: { settings: { providerConfig: "sim", patch } },
        } as Rollout;
        const backend: Backend = { recorded: FROM, phase: "ready", restartLooks: 0, bad: "" };
        let cluster: Cluster = base;
        let rollouts: Rollout[] = [rollout];
        let updates = 0;
        let failedWithTheRun = false;
        /** Whether the engine's commands may fail (the model's failures end, so that a life can settle). */
        let commandsMayFail = true;
        const look = (i: number) => {
          const settings = clusterSettings(cluster, CONFIG, rollouts);
          const target = settingsHash(settings);
          const result = stepClusterWrites(
            input(cluster, observe(backend, target, s.retrying[i % 40] ?? false), { settingsHash: target }),
          );
          cluster = afterWrites(cluster, result);
          for (const command of result.commands) {
            if (command.kind === "create") continue; // the cluster exists: create finds it whole
            expect(command.kind).toBe("update");
            // Never an update that would change nothing: what it runs differs from what it is given.
            expect(backend.recorded, "an update that changes nothing").not.toBe(target);
            if (rollouts.length > 0 && backend.phase === "failed")
              expect.fail("an update of a Cluster failed with the run's settings while the run exists");
            updates++;
            if (commandsMayFail && s.commandFails[i % 40]) {
              reached.commandFailed++;
              continue;
            }
            backend.recorded = target;
            backend.phase = "restarting";
            backend.restartLooks = s.restartLooks;
          }
          tick(backend);
        };
        let i = 0;
        // Ready first, recording the config's settings.
        for (; i < 3; i++) look(i);
        expect(cluster.status?.providerStatus?.settingsHash).toBe(FROM);
        for (let n = 0; n < s.before; n++, i++) look(i);
        // The run reaches it (its write: the annotation naming the run); bad settings fail at the backend.
        backend.bad = s.bad ? settingsHash(mergeSettings(OWN, patch)) : "";
        cluster = {
          ...cluster,
          metadata: {
            ...cluster.metadata,
            annotations: {
              ...cluster.metadata.annotations,
              [SETTINGS_FROM_ROLLOUT_ANNOTATION]: runName(rollout),
            },
          },
        };
        for (let n = 0; n < s.untilDeleted; n++, i++) {
          look(i);
          if (cluster.status?.providerStatus?.state === "failed") failedWithTheRun = true;
        }
        if (failedWithTheRun) reached.failedWhileTheRunExisted++;
        // The Rollout is deleted: its Clusters look again until they settle (commands failing for the first ten
        // looks at most: a run of failures as long as the looks would leave it updating, as it should).
        rollouts = [];
        for (let n = 0; n < 30; n++, i++) {
          commandsMayFail = n < 10;
          look(i);
        }
        expect(cluster.status?.providerStatus?.state).toBe("ready");
        expect(cluster.status?.phase).toBe("Ready");
        expect(cluster.status?.providerStatus?.settingsHash).toBe(FROM);
        expect(backend.recorded).toBe(FROM);
        const failedCommands = s.commandFails.filter(Boolean).length;
        expect(updates).toBeLessThanOrEqual(2 + failedCommands);
        if (failedWithTheRun) reached.failedThenGivenBack++;
        reached.givenBackReady++;
      }),
      // 400 lives (about 2 s here): a quarter fail with the run's settings (about 100), enough to show the branch;
      // 1,000 took 5.6 s, past the default timeout when the suite's heavy files share the machine.
      { numRuns: 400 },
    );
    console.log(`give-back: ${JSON.stringify(reached)}`);
    expect(reached.failedWhileTheRunExisted).toBeGreaterThan(50);
    expect(reached.failedThenGivenBack).toBeGreaterThan(50);
    expect(reached.commandFailed).toBeGreaterThan(50);
  }, 60_000);
});
