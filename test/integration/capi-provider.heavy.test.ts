import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPI_CLUSTER_RESOURCE, type CapiCluster } from "../../src/api/cluster-api.ts";
import { ENGINE_CLUSTER_FINALIZERS } from "../../src/api/constants/capi.ts";
import { INFRASTRUCTURE_GROUP, RESOURCES } from "../../src/api/constants.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import {
  expectClusterEndpoint,
  expectDeletedThroughCluster,
  expectWorkloadKubeconfig,
} from "../support/capi-contract-checks.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { type CapiProviderWorld, startCapiProviderWorld } from "../support/capi-provider-world.ts";
import { conditionOf } from "../support/conditions.ts";
import { idle, reconciles } from "../support/engine-signals.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { explained } from "../support/explained.ts";
import { killNineMidway } from "../support/kill-nine.ts";

const NAMESPACE = "capi";
let world: CapiProviderWorld;

beforeAll(async () => {
  world = await startCapiProviderWorld({
    namespace: NAMESPACE,
    provider: "capi",
    simulated: { provisionDelayMs: 500, deleteDelayMs: 300 },
    resyncMs: 60_000,
  });
}, 300_000);

afterAll(async () => {
  await world?.stop();
});

// --- the objects a Cluster API user applies -------------------------------------------------------

async function applyEngineCluster(
  name: string,
  profile: string,
  metadata: { annotations?: Record<string, string> } = {},
): Promise<EngineCluster> {
  return (await world.custom.createNamespacedCustomObject({
    ...RESOURCES.EngineCluster,
    namespace: NAMESPACE,
    body: {
      apiVersion: `${INFRASTRUCTURE_GROUP}/v1alpha1`,
      kind: "EngineCluster",
      metadata: { name, ...metadata },
      spec: { profile },
    },
  })) as EngineCluster;
}

async function applyCapiCluster(name: string, spec: Record<string, unknown> = {}): Promise<void> {
  await createCapiObject(world.custom, NAMESPACE, "Cluster", name, {
    infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: "EngineCluster", name },
    ...spec,
  });
}

const readEngineCluster = (name: string) => world.read<EngineCluster>(RESOURCES.EngineCluster, name);
const readCapiCluster = (name: string) => world.read<CapiCluster>(CAPI_CLUSTER_RESOURCE, name);

/** Waits until the CAPI Cluster shows `phase` (CAPI's own controller computes it), failing with what was seen. */
async function capiPhase(name: string, phase: string, timeoutMs = 90_000): Promise<CapiCluster> {
  return eventually(
    async () => {
      const cluster = await readCapiCluster(name);
      if (cluster?.status?.phase !== phase) {
        throw new Error(
          `Cluster ${name} is in phase ${cluster?.status?.phase}; EngineCluster: ${JSON.stringify((await readEngineCluster(name))?.status)}\nCAPI manager log:\n${world.capi.logTail()}`,
        );
      }
      return cluster;
    },
    { what: `Cluster ${NAMESPACE}/${name} in phase ${phase}`, timeoutMs },
  );
}

// The describe blocks run side by side, and the tests of the second too (their objects have names of their own; each
// test reads only the backend calls of its own objects' uids); one after the other they took the sum of their
// times, mostly waiting on Cluster API's manager and the backends. Inside this block the tests build on each other,
// in order.
describe.concurrent("a CAPI Cluster whose infrastructureRef names an EngineCluster (local backend)", () => {
  /** This block's tests, one after the other. */
  const inOrder = (timeout: number) => ({ concurrent: false, timeout });
  it(
    "goes Provisioning → Provisioned as CAPI computes it, with our endpoint, and the workload cluster answers through the kubeconfig Secret",
    inOrder(240_000),
    async () => {
      await applyEngineCluster("work", "test.capi-local.local");
      await applyCapiCluster("work");
      await capiPhase("work", "Provisioning");
      const provisioned = await capiPhase("work", "Provisioned", 150_000);

      const infra = await readEngineCluster("work");
      expect(infra?.metadata.ownerReferences).toContainEqual(
        expect.objectContaining({ kind: "Cluster", name: "work" }),
      );
      expect(infra?.status).toMatchObject({
        initialization: { provisioned: true },
        ready: true,
        phase: "Provisioned",
      });
      expect(conditionOf(infra, "Ready")).toMatchObject({ status: "True" });
      expect(infra?.spec.controlPlaneEndpoint?.host).toBe("127.0.0.1");
      expect(provisioned.spec?.controlPlaneEndpoint).toEqual(infra?.spec.controlPlaneEndpoint);

      await expectWorkloadKubeconfig(world, "work", infra?.spec.controlPlaneEndpoint);
      await expectClusterEndpoint(world, "work", infra?.spec.controlPlaneEndpoint, {
        kind: "EngineCluster",
        name: "work",
        uid: infra?.metadata.uid,
      });
    },
  );

  it(
    "is deleted through the Cluster: CAPI deletes the EngineCluster, we delete at the backend, the finalizer goes, the Cluster is gone",
    inOrder(180_000),
    async () => {
      const infra = await readEngineCluster("work");
      expect(infra?.metadata.finalizers).toContain(ENGINE_CLUSTER_FINALIZERS.engineCluster);
      await expectDeletedThroughCluster(world, "work", RESOURCES.EngineCluster, infra);
    },
  );
});

describe.concurrent("the contract's waits and hands-off rules (simulated backend)", () => {
  it("an EngineCluster no Cluster owns waits, saying so, and the backend is never called", async () => {
    const created = await applyEngineCluster("orphan", "test.capi-sim.sim");
    const waiting = await eventually(
      async () => satisfying(await readEngineCluster("orphan"), (c) => conditionOf(c, "Ready") !== undefined),
      { what: "orphan has a Ready condition" },
    );
    expect(conditionOf(waiting, "Ready")).toMatchObject({
      status: "False",
      reason: "WaitingForClusterOwner",
    });
    expect(waiting?.metadata.finalizers ?? []).not.toContain(ENGINE_CLUSTER_FINALIZERS.engineCluster);
    expect(world.callsOf(created.metadata.uid)).toEqual([]);

    // `explain` covers the kind: the state, the condition and what it waits for, in words.
    const text = await explained("enginecluster", `${NAMESPACE}/orphan`, world.controlPlane.kubeconfigPath);
    expect(text).toContain("State:        pending");
    expect(text).toContain("WaitingForClusterOwner");
    expect(text).toContain("a Cluster API Cluster that names it in spec.infrastructureRef");
  });

  it("an owned EngineCluster naming a profile that does not exist says so, naming the profiles that exist", async () => {
    const created = await applyEngineCluster("mistyped", "test.capi-sim.smi");
    await applyCapiCluster("mistyped");
    // Once CAPI made its Cluster the owner (until then it waits for one, saying so).
    const told = await eventually(
      async () =>
        satisfying(
          await readEngineCluster("mistyped"),
          (c) => conditionOf(c, "Ready")?.reason === "ProfileNotFound",
        ),
      { what: "mistyped has Ready=False ProfileNotFound", timeoutMs: 60_000 },
    );
    expect(conditionOf(told, "Ready")?.status).toBe("False");
    // Two engines (providers capi-local and capi-sim) serve this management cluster: the first to answer labels it
    // with its provider and names its own profiles; the other leaves it to that one.
    const answering = told?.metadata.labels?.["clusters.openmcp.cloud/provider"] ?? "";
    expect(["capi-local", "capi-sim"]).toContain(answering);
    expect(conditionOf(told, "Ready")?.message).toMatch(
      new RegExp(
        `^ClusterProfile "test\\.capi-sim\\.smi" does not exist; fix spec\\.profile or create it \\(this provider's profiles: .*test\\.${answering}\\..*; retrying\\)$`,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // a few reconciles of both engines later
    const later = await readEngineCluster("mistyped");
    expect(later?.metadata.labels?.["clusters.openmcp.cloud/provider"]).toBe(answering);
    expect(conditionOf(later, "Ready")?.message).toBe(conditionOf(told, "Ready")?.message);
    expect(world.callsOf(created.metadata.uid)).toEqual([]);
  });

  it("a paused EngineCluster gets only the Paused condition until it is unpaused; a paused Cluster pauses it again", async () => {
    const paused = { annotations: { "cluster.x-k8s.io/paused": "" } };
    const created = await applyEngineCluster("held", "test.capi-sim.sim", paused);
    await applyCapiCluster("held");
    const seen = await eventually(
      async () =>
        satisfying(
          await readEngineCluster("held"),
          (c) =>
            conditionOf(c, "Paused")?.status === "True" && (c?.metadata.ownerReferences?.length ?? 0) > 0,
        ),
      { what: "held Paused and owned by its Cluster" },
    );
    expect(seen?.metadata.ownerReferences?.length).toBe(1); // CAPI owns it, yet nothing happens
    expect(seen?.metadata.finalizers ?? []).not.toContain(ENGINE_CLUSTER_FINALIZERS.engineCluster);
    expect(seen?.status?.state).toBeUndefined();
    expect(world.callsOf(created.metadata.uid)).toEqual([]);

    await world.patch(RESOURCES.EngineCluster, "held", [
      { op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" },
    ]);
    await capiPhase("held", "Provisioned");

    // Pausing the Cluster pauses its infrastructure: a deleted ClusterEndpoint is not made again meanwhile.
    await world.patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "add", path: "/spec/paused", value: true }]);
    await eventually(
      async () =>
        expect(conditionOf(await readEngineCluster("held"), "Paused")?.message).toContain("spec.paused"),
      { what: "held paused by its Cluster" },
    );
    const before = world.callsOf(created.metadata.uid).length;
    const engine = world.engines.sim; // whose config serves "held"
    const reconciledBefore = await reconciles(engine.metrics, "enginecluster");
    await world.remove(RESOURCES.ClusterEndpoint, "held");
    // The engine has looked: its cache lost the endpoint (which wakes held), it reconciled since, and has no work left.
    const endpoints = engine.informers.of(CACHES.clusterEndpoints);
    await eventually(
      async () => {
        expect(endpoints.get(`${NAMESPACE}/held`)).toBeUndefined();
        expect(await reconciles(engine.metrics, "enginecluster")).toBeGreaterThan(reconciledBefore);
        expect(await idle(engine.metrics)).toBe(true);
      },
      { what: "the engine to reconcile held after its ClusterEndpoint went, and to be idle" },
    );
    expect(await world.readClusterEndpoint("held")).toBeUndefined();
    expect(world.callsOf(created.metadata.uid).length).toBe(before);

    await world.patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "replace", path: "/spec/paused", value: false }]);
    await eventually(async () => expect(await world.readClusterEndpoint("held")).toBeDefined(), {
      what: "ClusterEndpoint held published again",
    });
  }, 120_000);

  it("an externally managed EngineCluster is never written or built by us; its manager's answer is CAPI's", async () => {
    const created = await applyEngineCluster("external", "test.capi-sim.sim", {
      annotations: { "cluster.x-k8s.io/managed-by": "someone-else" },
    });
    await applyCapiCluster("external");
    await eventually(
      async () => expect((await readEngineCluster("external"))?.metadata.ownerReferences?.length).toBe(1),
      { what: "CAPI owns external" },
    );
    // The external manager answers.
    await world.patch(RESOURCES.EngineCluster, "external", [
      { op: "add", path: "/spec/controlPlaneEndpoint", value: { host: "10.1.2.3", port: 6443 } },
    ]);
    await world.custom.patchNamespacedCustomObjectStatus({
      ...RESOURCES.EngineCluster,
      namespace: NAMESPACE,
      name: "external",
      body: [{ op: "add", path: "/status", value: { initialization: { provisioned: true } } }],
    });
    const cluster = await capiPhase("external", "Provisioned");
    expect(cluster.spec?.controlPlaneEndpoint).toEqual({ host: "10.1.2.3", port: 6443 });
    const infra = await readEngineCluster("external");
    expect(infra?.status).toEqual({ initialization: { provisioned: true } });
    expect(infra?.metadata.finalizers ?? []).not.toContain(ENGINE_CLUSTER_FINALIZERS.engineCluster);
    expect(world.callsOf(created.metadata.uid)).toEqual([]);
  }, 120_000);
});

describe.concurrent("the controller killed with kill -9 mid-provisioning", () => {
  it("orders exactly one cluster at the backend and still reaches Provisioned after the restart", async () => {
    const { args, state } = await world.engineProcess();
    let created: EngineCluster | undefined;
    await killNineMidway({
      kind: "EngineCluster",
      args,
      create: async () => {
        created = await applyEngineCluster("survivor", "test.capi-kill.kill-sim");
        await applyCapiCluster("survivor");
      },
      midway: async (first) => {
        await eventually(
          async () =>
            satisfying(await readEngineCluster("survivor"), (c) =>
              (c?.metadata.finalizers ?? []).includes(ENGINE_CLUSTER_FINALIZERS.engineCluster),
            ),
          { what: "survivor holds our finalizer (the cluster is ordered)", timeoutMs: 60_000 },
        );
        await eventually(() => first.output().includes('"command":"create"'), { what: "the create logged" });
      },
      finished: async (first, second) => {
        await capiPhase("survivor", "Provisioned");
        const creates = (first.output() + second.output())
          .split("\n")
          .filter((line) => line.includes('"command":"create"') && line.includes(`${NAMESPACE}/survivor`));
        // The create is ordered again only if the first controller died between ordering it and recording
        // it (the backend's create is idempotent by uid, so it still makes one cluster, checked below).
        const provisioningRecorded = first
          .output()
          .split("\n")
          .some(
            (line) =>
              line.includes('"msg":"reconciled"') &&
              line.includes(`${NAMESPACE}/survivor`) &&
              line.includes('"state":"provisioning"'),
          );
        expect(creates.length, `${first.output()}\n---\n${second.output()}`).toBeLessThanOrEqual(
          provisioningRecorded ? 1 : 2,
        );
        const simulated = new SimulatedBackend({ stateDirectory: join(state, "simulated") });
        expect(simulated.createdTotal).toBe(1);
        expect((await simulated.observe(world.targetOf(created, "sim"))).exists).toBe(true);
      },
    });
  }, 180_000);
});
