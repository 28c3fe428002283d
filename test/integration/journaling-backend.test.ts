/** The journaling backend under the engine CLI: one replica's journal shows each Cluster created once, no overlap. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";
import { createsPerCluster, overlappingCalls } from "../support/journal-checks.ts";
import { readJournals } from "../support/journaling-backend.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";

const JOURNALING_BACKEND = join(import.meta.dirname, "..", "support", "journaling-backend.ts");
const NAMESPACE = "journaled";
const folder = mkdtempSync(join(tmpdir(), "journaling-backend-"));
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith(NAMESPACE));
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
});

afterAll(async () => {
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** `openmcp-engine run` as replica `replica`, on the journaling backend. */
function startReplica(replica: string) {
  return startEngineCli(
    engineRunArgs(
      {
        provider: "journal",
        environment: "test",
        kubeconfig: controlPlane.kubeconfigPath,
        stateDir: join(folder, "state"),
      },
      `--backend=${JOURNALING_BACKEND}`,
      `--backend-option=journal=${join(folder, `${replica}.jsonl`)}`,
      `--backend-option=replica=${replica}`,
      "--backend-option=delay=300ms",
      "--no-schedule",
    ),
  );
}

describe("one engine on the journaling backend", () => {
  it("journals one successful create per Cluster, no two calls about one cluster at once, all ended after a graceful stop", async () => {
    const engine = startReplica("r1");
    const names = ["a", "b", "c"];
    try {
      for (const name of names) {
        await custom.createNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: NAMESPACE,
          body: aCluster({ name, namespace: NAMESPACE, profile: "test.journal.sim" }),
        });
      }
      const clusters = await eventually(
        async () => {
          const { items } = (await custom.listNamespacedCustomObject({
            ...RESOURCES.Cluster,
            namespace: NAMESPACE,
          })) as { items: Cluster[] };
          expect(items.map((cluster) => [cluster.metadata.name, cluster.status?.phase])).toEqual(
            names.map((name) => [name, "Ready"]),
          );
          return items;
        },
        { what: "every Cluster Ready", timeoutMs: 60_000 },
      );
      engine.child.kill("SIGTERM");
      await new Promise((resolve) => engine.child.once("exit", resolve));

      const calls = readJournals([join(folder, "r1.jsonl")]);
      const uids = clusters.map((cluster) => cluster.metadata.uid ?? "");
      expect(createsPerCluster(calls)).toEqual(new Map(uids.map((uid) => [uid, 1])));
      expect(new Set(calls.map((call) => call.replica))).toEqual(new Set(["r1"]));
      expect(calls.filter((call) => call.end === undefined)).toEqual([]);
      expect(new Set(calls.filter((call) => call.cluster !== null).map((call) => call.clusterName))).toEqual(
        new Set(names.map((name) => `${NAMESPACE}/${name}`)),
      );
      // One engine reconciles a Cluster at a time, so even its own calls about one cluster never overlap.
      expect(overlappingCalls(calls, { sameReplica: true })).toEqual([]);
    } finally {
      engine.child.kill("SIGKILL");
    }
  }, 120_000);
});
