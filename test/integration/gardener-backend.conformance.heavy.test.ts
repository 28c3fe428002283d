/**
 * The `gardener` backend passes the backend conformance kit against Gardener's own API server, with the SIMULATED
 * gardenlet making each Shoot's API server a real local control plane.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import {
  applyCloudProfile,
  CORE,
  createProject,
  workerlessShootSpec,
} from "../../src/dev/gardener-garden-objects.ts";
import { SimulatedGardenlet } from "../../src/dev/gardener-simulated-gardenlet.ts";
import { type ConformanceRun, checkBackendConformance } from "../../src/providers/conformance.ts";
import { createBackend, type GardenerBackend } from "../../src/providers/gardener.ts";
import { GARDENER_KEYS } from "../../src/providers/gardener-shoot.ts";
import { aProviderConfig } from "../support/builders.ts";

let garden: Garden;
let gardenlet: SimulatedGardenlet;
let namespace: string;

beforeAll(async () => {
  findGardenerAssets(); // builds gardener-apiserver once per machine (hack/gardener/build.sh)
  garden = await startGarden();
  await applyCloudProfile(garden.kubeConfig, "local", [
    { version: "1.35.1", classification: "supported" },
    { version: "1.34.2", classification: "supported" },
    { version: "1.33.9", classification: "deprecated" },
  ]);
  namespace = await createProject(garden.kubeConfig, "conf");
  gardenlet = new SimulatedGardenlet({ kubeConfig: garden.kubeConfig });
}, 3_600_000);
afterAll(async () => {
  await gardenlet?.stop();
  await garden?.stop();
});

/** Records in the state file, this run's Shoots in the project, control planes the simulated gardenlet still runs. */
async function leftovers(stateDirectory: string, run: ConformanceRun): Promise<string[]> {
  let records: Array<{ uid: string; shoot: string }> = [];
  try {
    records = JSON.parse(readFileSync(join(stateDirectory, "gardener.json"), "utf8")).shoots;
  } catch {
    // nothing was ever ordered
  }
  const shoots = (await garden.kubeConfig
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...CORE, namespace, plural: "shoots" })) as {
    items: { metadata: { name: string; annotations?: Record<string, string> } }[];
  };
  // Shoot names come from the Cluster's name, the same in every run: only this run's own Shoots count here.
  const ours = shoots.items.filter((s) =>
    run.uids.includes(s.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation] ?? ""),
  );
  // The simulated gardenlet stops a control plane's processes just after it lets go of the Shoot: give it the time
  // a Shoot may take to be ready (on a loaded machine, beside other heavy files, 30 s was once too short).
  for (let waited = 0; ours.length === 0 && gardenlet.controlPlanes > 0 && waited < 90_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return [
    ...records.map((r) => `record of ${r.uid} (Shoot ${r.shoot})`),
    ...ours.map((s) => `Shoot ${namespace}/${s.metadata.name}`),
    ...(gardenlet.controlPlanes > 0 ? [`${gardenlet.controlPlanes} Shoot control planes`] : []),
  ];
}

it("passes the conformance kit", async () => {
  const kubeconfig = readFileSync(garden.kubeconfigPath, "utf8");
  const started = performance.now();
  await checkBackendConformance(createBackend, {
    // Each Shoot is a real control plane (seconds to start): few, short sequences.
    numRuns: 10,
    maxCommands: 10,
    readyTimeoutMs: 90_000,
    config: aProviderConfig({
      name: "conformance",
      backend: "gardener",
      settings: {
        kubeconfigSecretRef: { namespace: "gardens", name: "garden" },
        project: "conf",
        shootTemplate: { spec: workerlessShootSpec("local") },
      },
    }),
    context: {
      readSecret: async (ns, name, key) =>
        ns === "gardens" && name === "garden" && key === "kubeconfig" ? kubeconfig : undefined,
    },
    leftovers,
    liveClusters: (backend: ClusterBackend) => (backend as GardenerBackend).shootCount,
  });
  // The kit begins with the plain life of one Cluster: the simulated gardenlet made real control planes.
  expect(gardenlet.started).toBeGreaterThan(0);
  console.log(
    `gardener: 10 runs in ${Math.round(performance.now() - started)} ms, ${gardenlet.started} Shoot control planes`,
  );
}, 1_200_000);
