/**
 * The `capi` backend passes the backend conformance kit against Cluster API's own controllers: the core manager,
 * the kubeadm control-plane and bootstrap managers and CAPD, with the `in-memory-kubeadm` ClusterClass — CAPD's
 * in-memory machines, each cluster a simulated API server CAPD serves — because a property test of random call
 * sequences needs many clusters, and Docker machines take minutes each (capi-backend.heavy.test.ts proves those).
 * Warm pools too (contract 1.5): the pool kit, and a bound member that an engine on an empty state folder finds by
 * its labels, serves, hands over (`move`) and deletes.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { BackendContext, BackendModule, ClusterBackend } from "../../src/api/backend-contract.ts";
import { poolMemberTarget } from "../../src/api/cluster-pool.ts";
import type { JsonObject } from "../../src/api/common.ts";
import { compareVersions } from "../../src/machines/backend-cluster/kubernetes-version.ts";
import type { CapiBackend } from "../../src/providers/capi.ts";
import * as capi from "../../src/providers/capi.ts";
import { poolMemberClusterName } from "../../src/providers/capi-pool-members.ts";
import { CAPI_BACKEND_KEYS, capiClusterName } from "../../src/providers/capi-topology.ts";
import { checkBackendConformance } from "../../src/providers/conformance.ts";
import { checkPoolConformance } from "../../src/providers/conformance-pools.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aProviderConfig } from "../support/builders.ts";
import { inMemoryKubeadmClass } from "../support/capi-classes.ts";
import { type CapiManagement, CLASS_NAMESPACE, startCapiManagement } from "../support/capi-management.ts";
import { eventually, satisfying } from "../support/eventually.ts";

/**
 * Sequences the kit tries, its three fixed lives (plain, moved, slept) among them: each costs Cluster API about
 * 35 s here, so three random ones beside them (10 runs took 360 s of the suite's budget; the kit's rules are
 * searched at 20 runs on the simulated backend, where a run costs milliseconds).
 */
const RUNS = 6;
/** Where the kit's CAPI Clusters go. */
const NS = "conformance-capi";
/** Where the rollout's CAPI Cluster goes: apart from the kit's, whose count the kit checks while both run. */
const ROLLOUT_NS = "rollout-capi";
/** Where the pool kit's members go, and the bound member's: apart from the others, whose CAPI Clusters are counted. */
const POOL_KIT_NS = "pool-kit-capi";
const POOL_NS = "pool-capi";
let management: CapiManagement;

beforeAll(async () => {
  // Waits while capi-backend.heavy.test.ts holds this machine's CAPD (its fixed ports allow one at a time).
  management = await startCapiManagement({
    classes: inMemoryKubeadmClass(),
    namespaces: [NS, ROLLOUT_NS, POOL_KIT_NS, POOL_NS],
  });
}, 1_500_000);
afterAll(async () => {
  await management?.stop();
}, 120_000);

/** Records in the state file, CAPI Clusters and Machines still in the namespace. */
async function leftovers(stateDirectory: string): Promise<string[]> {
  let records: Array<{ uid: string; name: string }> = [];
  try {
    records = JSON.parse(readFileSync(join(stateDirectory, "capi.json"), "utf8")).clusters;
  } catch {
    // nothing was ever made
  }
  const machines = (await management.custom.listNamespacedCustomObject({
    group: "cluster.x-k8s.io",
    version: "v1beta2",
    plural: "machines",
    namespace: NS,
  })) as { items: { metadata: { name: string } }[] };
  return [
    ...records.map((r) => `record of ${r.uid} (CAPI Cluster ${r.name})`),
    ...(await management.capiClusters(NS)).map((c) => `CAPI Cluster ${NS}/${c.metadata.name}`),
    ...machines.items.map((m) => `Machine ${NS}/${m.metadata.name}`),
  ];
}

/** What reached Cluster API through the backends the kit made: proof that its branches ran, not just passed. */
type Reached = { creates: number; upgrades: number; refusedDowngrades: number; deletes: number };
const none = (): Reached => ({ creates: 0, upgrades: 0, refusedDowngrades: 0, deletes: 0 });
const reached = none();
/** The same per run of the kit (a run's backends share its state folder), to see what each run adds. */
const reachedPerRun = new Map<string, Reached>();

/** The backend module, with a factory whose backends count the calls that reached Cluster API. */
const counted: BackendModule = {
  contractVersion: capi.contractVersion,
  createBackend: async (context: BackendContext): Promise<ClusterBackend> => {
    const backend = await capi.createBackend(context);
    const run = reachedPerRun.get(context.stateDirectory) ?? none();
    reachedPerRun.set(context.stateDirectory, run);
    const count = (what: keyof Reached) => {
      reached[what]++;
      run[what]++;
    };
    return new Proxy(backend, {
      get(real, property) {
        if (property === "create")
          return async (target: ClusterTarget, version: string) => {
            await real.create(target, version);
            count("creates");
          };
        if (property === "update")
          return async (target: ClusterTarget, version: string) => {
            const before = await real.observe(target);
            try {
              await real.update(target, version);
            } catch (error) {
              if (before.exists && compareVersions(version, before.version) < 0) count("refusedDowngrades");
              throw error;
            }
            if (before.exists && before.version !== version) count("upgrades");
          };
        if (property === "delete")
          return async (target: ClusterTarget) => {
            await real.delete(target);
            count("deletes");
          };
        const value = Reflect.get(real, property, real);
        return typeof value === "function" ? value.bind(real) : value;
      },
    });
  },
};

// Side by side: the kit and the rollout use their own backends and namespaces, and CAPD's in-memory machines
// are light; one after the other they cost a minute more.
describe.concurrent("the capi backend on Cluster API's in-memory machines", () => {
  it("passes the conformance kit on Cluster API's in-memory machines", async ({ expect }) => {
    const started = performance.now();
    let created = 0;
    await checkBackendConformance(counted, {
      // Each cluster is a kubeadm control plane on a simulated machine (tens of seconds): few, short sequences.
      numRuns: RUNS,
      maxCommands: 8,
      readyTimeoutMs: 300_000,
      // CAPD's in-memory clusters are stand-ins: their API servers serve no SelfSubjectReview or access reviews, so
      // the kit checks only that the kubeconfig names the endpoint (capi-backend.heavy.test.ts grants access on Docker machines).
      verifyAdminAccess: false,
      config: aProviderConfig({
        name: "conformance",
        backend: "capi",
        supportedVersions: [{ version: "1.36.3" }, { version: "1.37.0" }],
        settings: {
          clusterClass: { namespace: CLASS_NAMESPACE, name: "in-memory-kubeadm" },
          namespace: NS,
          variables: [{ name: "team", value: "conformance" }],
        },
      }),
      context: { options: { kubeconfig: management.controlPlane.kubeconfigPath } },
      leftovers,
      // CAPI Clusters not being deleted: never more than the Cluster objects that exist.
      liveClusters: async () => {
        const live = (await management.capiClusters(NS)).filter((c) => !c.metadata.deletionTimestamp);
        created = Math.max(created, live.length);
        return live.length;
      },
    });
    // The kit begins with the plain life of one Cluster: Cluster API made at least one.
    expect(created).toBeGreaterThan(0);
    console.log(
      `capi conformance: ${RUNS} runs in ${Math.round((performance.now() - started) / 1000)} s; reached Cluster API: ${JSON.stringify(reached)}; per run: ${[...reachedPerRun.values()].map((r) => JSON.stringify(r)).join(", ")}`,
    );
    expect(reached.creates).toBeGreaterThan(0);
    expect(reached.deletes).toBeGreaterThan(0);
  }, 3_600_000);

  it("rolls a kubeadm control plane to a new version through the topology, and refuses to go back", async ({
    expect,
  }) => {
    const stateDirectory = mkdtempSync(join(tmpdir(), "capi-upgrade-"));
    const backend = (await capi.createBackend(
      aBackendContext(stateDirectory, { kubeconfig: management.controlPlane.kubeconfigPath }),
    )) as CapiBackend;
    const target: ClusterTarget = {
      uid: "00000000-0000-4000-8000-00000000abcd",
      namespace: "upgrades",
      name: "rolling",
      tenancy: "Exclusive",
      profile: "test.capi.in-memory",
      providerConfig: "in-memory",
      settings: {
        clusterClass: { namespace: CLASS_NAMESPACE, name: "in-memory-kubeadm" },
        namespace: ROLLOUT_NS,
      },
    };
    const readyAt = (version: string) =>
      eventually(
        async () =>
          satisfying(
            await backend.observe(target),
            (o) => o.exists && o.phase === "ready" && o.version === version,
          ),
        { what: `in-memory cluster ready at ${version}`, timeoutMs: 300_000, intervalMs: 1_000 },
      );
    try {
      await backend.create(target, "1.36.3");
      await readyAt("1.36.3");
      const name = capiClusterName(target);
      const before = (await management.capiClusters(ROLLOUT_NS)).find((c) => c.metadata.name === name);
      // As the engine does: an update that met a write of Cluster API's own (a conflict) is called again.
      await eventually(() => backend.update(target, "1.37.0"), {
        what: "the update taken (called again after a conflict, as the engine calls it)",
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      // While KubeadmControlPlane replaces the machine, the cluster reports the version it still runs.
      const rolling = await eventually(
        async () => satisfying(await backend.observe(target), (o) => o.exists && o.phase !== "ready"),
        { what: "the rollout seen", timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(rolling).toMatchObject({ phase: "updating", version: "1.36.3" });
      await readyAt("1.37.0");
      const after = (await management.capiClusters(ROLLOUT_NS)).find((c) => c.metadata.name === name);
      expect(after?.spec.topology?.version).toBe("v1.37.0");
      expect(after?.metadata.generation).toBe((before?.metadata.generation ?? 0) + 1); // one change: the version
      expect(after?.status?.controlPlane?.versions).toEqual([{ version: "v1.37.0", replicas: 1 }]);
      await expect(backend.update(target, "1.36.3")).rejects.toThrow(
        `runs Kubernetes 1.37.0; the engine does not downgrade it to 1.36.3`,
      );
      await backend.delete(target);
      await eventually(async () => satisfying(await backend.observe(target), (o) => !o.exists), {
        what: "in-memory cluster gone",
        timeoutMs: 300_000,
        intervalMs: 1_000,
      });
      expect(backend.clusterCount).toBe(0);
    } finally {
      await backend.delete(target).catch(() => {});
      rmSync(stateDirectory, { recursive: true, force: true });
    }
  }, 900_000);

  it("keeps warm pools: passes the pool kit, a restart of the backend between every two steps", async () => {
    const started = performance.now();
    await checkPoolConformance(capi.createBackend, {
      readyTimeoutMs: 300_000,
      config: inMemoryConfig("pool-kit", POOL_KIT_NS),
      context: { options: { kubeconfig: management.controlPlane.kubeconfigPath } },
    });
    // The kit ordered every deletion; Cluster API finishes them.
    await eventually(
      async () => satisfying(await management.capiClusters(POOL_KIT_NS), (l) => l.length === 0),
      {
        what: "the pool kit's CAPI Clusters gone",
        timeoutMs: 300_000,
        intervalMs: 1_000,
      },
    );
    console.log(`capi pool kit: ${Math.round((performance.now() - started) / 1000)} s`);
  }, 1_800_000);

  it("binds a pool member on the CAPI Cluster itself: an engine on an empty state folder finds, serves, moves and deletes it", async ({
    expect,
  }) => {
    const started = performance.now();
    const folders: string[] = [];
    const open = async () => {
      const stateDirectory = mkdtempSync(join(tmpdir(), "capi-pool-"));
      folders.push(stateDirectory);
      return (await capi.createBackend(
        aBackendContext(stateDirectory, { kubeconfig: management.controlPlane.kubeconfigPath }),
      )) as CapiBackend;
    };
    const config = inMemoryConfig("pooled", POOL_NS);
    const settings = config.spec.settings as JsonObject;
    const id = "pool-00000000c0de";
    const pool = "warm";
    const cluster: ClusterTarget = {
      uid: "00000000-0000-4000-8000-0000000000b1",
      namespace: "team-a",
      name: "served",
      tenancy: "Exclusive",
      profile: "test.capi.pooled",
      providerConfig: "pooled",
      settings,
      labels: { "metadata.open-control-plane.io/tenant": "acme" },
    };
    const first = await open();
    const [second, third] = [await open(), await open()];
    try {
      await first.readOffer(config);
      await first.pools.createMember(
        { id, pool, version: "1.36.3" },
        poolMemberTarget(id, { name: "pooled", settings }),
      );
      await eventually(
        async () =>
          satisfying(await first.pools.listMembers(pool), (members) =>
            members.some((m) => m.id === id && m.observation.exists && m.observation.phase === "ready"),
          ),
        { what: "the pool member ready", timeoutMs: 300_000, intervalMs: 1_000 },
      );
      expect((await first.observe(cluster)).exists).toBe(false);
      await first.pools.bind(id, cluster);

      // An engine whose state folder is empty: it learns where the config's CAPI Clusters are from its offer.
      await expect(second.pools.listMembers(pool)).rejects.toThrow(`no ProviderConfig read yet`);
      await second.readOffer(config);
      expect(await second.pools.listMembers(pool)).toMatchObject([
        { id, pool, version: "1.36.3", boundTo: cluster.uid, observation: { exists: true, phase: "ready" } },
      ]);
      const observed = await second.observe(cluster);
      expect(observed).toMatchObject({ exists: true, phase: "ready", version: "1.36.3" });
      // Cluster API's kubeconfig Secret of the member, naming its endpoint.
      const endpoint = String(observed.exists && observed.endpoint);
      expect(endpoint).toMatch(/^https:\/\//);
      expect((await second.adminAccess(cluster, observed))?.kubeconfig).toContain(endpoint);
      await second.create(cluster, "1.36.3"); // bound: makes nothing
      await second.pools.bind(id, cluster); // again: changes nothing
      // Brings the Cluster's openMCP labels onto the member. Cluster API's controllers may change the CAPI Cluster
      // meanwhile: the backend then says so ("changed meanwhile; trying again") and, as the engine does, we call again.
      await eventually(() => second.update(cluster, "1.36.3"), {
        what: "the member's labels brought in line",
        timeoutMs: 60_000,
        intervalMs: 1_000,
      });
      const [capiCluster, ...more] = await management.capiClusters(POOL_NS);
      expect(more).toEqual([]);
      expect(capiCluster?.metadata.name).toBe(poolMemberClusterName(id));
      expect(capiCluster?.metadata.labels).toMatchObject({
        [CAPI_BACKEND_KEYS.clusterUidLabel]: cluster.uid,
        [CAPI_BACKEND_KEYS.clusterNamespaceLabel]: "team-a",
        [CAPI_BACKEND_KEYS.clusterNameLabel]: "served",
        [CAPI_BACKEND_KEYS.poolMemberLabel]: id,
        "metadata.open-control-plane.io/tenant": "acme",
      });
      expect(capiCluster?.metadata.annotations).toMatchObject({ [CAPI_BACKEND_KEYS.poolAnnotation]: pool });

      // `move`: what the second engine hands over leads a third (empty folder, no offer read) to the member.
      await third.importCluster(cluster, await second.exportCluster(cluster));
      expect(await third.observe(cluster)).toMatchObject({ exists: true, phase: "ready" });
      await third.delete(cluster);
      await eventually(async () => satisfying(await third.observe(cluster), (o) => !o.exists), {
        what: "the bound member deleted with its Cluster",
        timeoutMs: 300_000,
        intervalMs: 1_000,
      });
      expect(await second.pools.listMembers(pool)).toEqual([]);
      expect(await management.capiClusters(POOL_NS)).toEqual([]);
      expect(third.clusterCount).toBe(0);
      console.log(`capi bound pool member: ${Math.round((performance.now() - started) / 1000)} s`);
    } finally {
      await first.pools.deleteMember(id).catch(() => {});
      for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    }
  }, 900_000);
});

/** A ProviderConfig of the in-memory class, its CAPI Clusters in `namespace`. */
function inMemoryConfig(name: string, namespace: string) {
  return aProviderConfig({
    name,
    backend: "capi",
    supportedVersions: [{ version: "1.36.3" }],
    settings: { clusterClass: { namespace: CLASS_NAMESPACE, name: "in-memory-kubeadm" }, namespace },
  });
}
