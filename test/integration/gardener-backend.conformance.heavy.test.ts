/**
 * The `gardener` backend passes the backend conformance kit and the pool conformance check against Gardener's own
 * API server, with the SIMULATED gardenlet making each Shoot's API server a real local control plane; a Cluster
 * bound to a pool member moves to another engine, which finds the member's Shoot by the binding it carries.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { poolMemberTarget } from "../../src/api/cluster-pool.ts";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import {
  applyCloudProfile,
  CORE,
  createProject,
  workerlessShootSpec,
} from "../../src/dev/gardener-garden-objects.ts";
import { SimulatedGardenlet } from "../../src/dev/gardener-simulated-gardenlet.ts";
import {
  type ConformanceRun,
  checkBackendConformance,
  conformanceContext,
} from "../../src/providers/conformance.ts";
import { checkPoolConformance } from "../../src/providers/conformance-pools.ts";
import { createBackend, type GardenerBackend } from "../../src/providers/gardener.ts";
import { GARDENER_KEYS, memberShootName, type Shoot } from "../../src/providers/gardener-shoot.ts";
import { aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";

let garden: Garden;
let gardenlet: SimulatedGardenlet;
let namespace: string;
const config = aProviderConfig({
  name: "conformance",
  backend: "gardener",
  settings: {
    kubeconfigSecretRef: { namespace: "gardens", name: "garden" },
    project: "conf",
    shootTemplate: { spec: workerlessShootSpec("local") },
  },
});
const readSecret = async (ns: string, name: string, key: string) =>
  ns === "gardens" && name === "garden" && key === "kubeconfig"
    ? readFileSync(garden.kubeconfigPath, "utf8")
    : undefined;
const projectShoots = async () =>
  (
    (await garden.kubeConfig
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ ...CORE, namespace, plural: "shoots" })) as { items: Shoot[] }
  ).items;

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
  const started = performance.now();
  await checkBackendConformance(createBackend, {
    // Each Shoot is a real control plane (seconds to start): few, short sequences.
    numRuns: 10,
    maxCommands: 10,
    readyTimeoutMs: 90_000,
    config,
    context: { readSecret },
    leftovers,
    liveClusters: (backend: ClusterBackend) => (backend as GardenerBackend).shootCount,
  });
  // The kit begins with the plain life of one Cluster: the simulated gardenlet made real control planes.
  expect(gardenlet.started).toBeGreaterThan(0);
  console.log(
    `gardener: 10 runs in ${Math.round(performance.now() - started)} ms, ${gardenlet.started} Shoot control planes`,
  );
}, 1_200_000);

// After the kit: its leftovers check counts every control plane the simulated gardenlet runs.
for (const emptyStateOnRestart of [false, true]) {
  it(`keeps warm pools by the contract, restarted on ${emptyStateOnRestart ? "a new, empty" : "the same"} state folder at every step`, async () => {
    const started = performance.now();
    await checkPoolConformance(createBackend, {
      readyTimeoutMs: 90_000,
      config,
      context: { readSecret },
      emptyStateOnRestart,
    });
    console.log(
      `gardener pools (${emptyStateOnRestart ? "empty" : "same"} state folder on restart): ${Math.round(performance.now() - started)} ms`,
    );
  }, 600_000);
}

it("moves a Cluster bound to a pool member: the engine it goes to acts on the member's Shoot, handed its record or not", async () => {
  const folders = ["from", "to", "bare"].map((name) => mkdtempSync(join(tmpdir(), `gardener-move-${name}-`)));
  const [from, to, bare] = folders.map(
    (folder) => createBackend(conformanceContext(folder, { readSecret })) as GardenerBackend,
  ) as [GardenerBackend, GardenerBackend, GardenerBackend];
  const settings = config.spec.settings;
  const id = `pool-${randomBytes(6).toString("hex")}`;
  const cluster: ClusterTarget = {
    uid: randomUUID(),
    namespace: "team",
    name: "moved",
    tenancy: "Exclusive",
    profile: "conformance",
    providerConfig: "conformance",
    ...(settings ? { settings } : {}),
  };
  try {
    const [newest] = (await from.readOffer(config)).versions;
    const version = newest?.version ?? "";
    await from.pools.createMember(
      { id, pool: "movers", version },
      poolMemberTarget(id, { name: "conformance", ...(settings ? { settings } : {}) }),
    );
    // As the engine: a member is bound once Ready (the simulated gardenlet has stopped writing it).
    await eventually(
      async () =>
        satisfying(
          await from.pools.listMembers("movers"),
          (members) => members[0]?.observation.exists === true && members[0].observation.phase === "ready",
        ),
      { what: `pool member ${id} ready`, timeoutMs: 90_000, intervalMs: 250 },
    );
    await from.pools.bind(id, cluster);
    const handed = await from.exportCluster(cluster);
    expect(JSON.parse(handed["record.json"] ?? "{}")).toMatchObject({
      shoot: memberShootName(id),
      member: { id },
    });
    await to.importCluster(cluster, handed);
    const ready = await eventually(
      async () => satisfying(await to.observe(cluster), (o) => o.exists && o.phase === "ready"),
      { what: "the moved Cluster ready on the engine it went to", timeoutMs: 90_000, intervalMs: 250 },
    );
    // Nothing handed over, nothing read before: the Shoot's binding leads to it all the same.
    expect(await bare.observe(cluster)).toMatchObject({
      exists: true,
      phase: "ready",
      endpoint: ready.exists && ready.endpoint,
    });
    const found = await bare.exportCluster(cluster);
    expect(JSON.parse(found["record.json"] ?? "{}")).toEqual(JSON.parse(handed["record.json"] ?? "{}"));

    // The Cluster's commands act on the member's Shoot: create makes none, update brings the Cluster's labels.
    await to.create(cluster, version);
    const labelled = { ...cluster, labels: { "openmcp.cloud/project": "moved-here" } };
    await to.update(labelled, version);
    const shoots = await projectShoots();
    expect(
      shoots.filter((s) => s.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation] === cluster.uid),
    ).toEqual([]);
    const shoot = shoots.find((s) => s.metadata.name === memberShootName(id));
    expect(shoot?.metadata.labels?.["openmcp.cloud/project"]).toBe("moved-here");
    expect(shoot?.metadata.annotations).toMatchObject({
      [GARDENER_KEYS.boundToAnnotation]: cluster.uid,
      [GARDENER_KEYS.clusterUidAnnotation]: id,
      [GARDENER_KEYS.clusterAnnotation]: "team/moved",
    });
    const access = await bare.adminAccess(labelled);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(access?.kubeconfig ?? "");
    expect(kubeConfig.getCurrentCluster()?.server).toBe(ready.exists && ready.endpoint);
    await kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: "default" }); // works on the member's API server
    await bare.trustOidcIssuers(labelled, []);
    const trusted = (await projectShoots()).find((s) => s.metadata.name === memberShootName(id));
    expect(
      (
        trusted?.spec.kubernetes as {
          kubeAPIServer?: { structuredAuthentication?: { configMapName?: string } };
        }
      )?.kubeAPIServer?.structuredAuthentication?.configMapName,
    ).toBe(`${memberShootName(id)}-authentication`);
    await bare.readOffer(config); // as the engine does at start: where pools are looked for
    expect((await bare.pools.listMembers("movers")).map((m) => [m.id, m.boundTo])).toEqual([
      [id, cluster.uid],
    ]);

    await to.delete(labelled);
    await eventually(async () => satisfying(await bare.observe(cluster), (o) => !o.exists), {
      what: "the moved Cluster's Shoot gone",
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    expect(await to.pools.listMembers("movers")).toEqual([]);
    expect((await projectShoots()).filter((s) => s.metadata.name === memberShootName(id))).toEqual([]);
  } finally {
    await from.pools.deleteMember(id).catch(() => {});
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}, 300_000);
