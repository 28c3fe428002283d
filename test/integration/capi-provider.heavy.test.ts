import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { CAPI_CLUSTER_RESOURCE, type CapiCluster } from "../../src/api/cluster-api.ts";
import { FINALIZERS, INFRASTRUCTURE_GROUP, RESOURCES } from "../../src/api/constants.ts";
import type { ClusterEndpointObject, EngineCluster } from "../../src/api/engine-cluster.ts";
import { explain } from "../../src/cli/explain.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { type CapiManager, startCapiManager } from "../../src/dev/capi-manager.ts";
import { createBackend as createLocalBackend } from "../../src/providers/local.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { installCrds, installingCrds } from "../../src/runtime/install-crds.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aProviderConfig } from "../support/builders.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { idle, reconciles } from "../support/engine-signals.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { killNineMidway } from "../support/kill-nine.ts";
import { type CustomResource, orAbsent, readCustomObject } from "../support/maybe-absent.ts";
import { engineRunArgs } from "../support/processes.ts";

const NAMESPACE = "capi";
let controlPlane: ControlPlane;
let capi: CapiManager;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let folder: string;
const engines: Engine[] = [];
const backends: ClusterBackend[] = [];

/** Every backend call, by Cluster uid: "no backend call" is checked against this. */
const calls = new Map<string, string[]>();
function counting(backend: ClusterBackend): ClusterBackend {
  const recorded =
    <A extends unknown[], R>(method: string, call: (target: ClusterTarget, ...rest: A) => Promise<R>) =>
    (target: ClusterTarget, ...rest: A): Promise<R> => {
      calls.set(target.uid, [...(calls.get(target.uid) ?? []), method]);
      return call(target, ...rest);
    };
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    supportedVersions: (config) => backend.supportedVersions(config),
    traits: (config) => backend.traits(config),
    observe: recorded("observe", (target) => backend.observe(target)),
    create: recorded("create", (target, version: string) => backend.create(target, version)),
    update: recorded("update", (target, version: string) => backend.update(target, version)),
    delete: recorded("delete", (target) => backend.delete(target)),
    adminAccess: recorded("adminAccess", (target) => backend.adminAccess(target)),
    close: () => backend.close?.() ?? Promise.resolve(),
  };
}

async function startEngine(providerName: string, backend: ClusterBackend): Promise<void> {
  const engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName,
    environment: "test",
    backend: counting(backend),
    capi: true,
    timing: { pollMs: 300, retryMs: 2_000, resyncMs: 60_000 },
  });
  engines.push(engine);
  await engine.start();
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "capi-provider-"));
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  capi = await startCapiManager({ kubeConfig: controlPlane.kubeConfig, installCrds });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  // Two providers on one API server: each config names the one it belongs to.
  for (const [name, backend, provider] of [
    ["sim", "simulated", "capi-sim"],
    ["local", "local", "capi-local"],
  ] as const) {
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name, backend, providerRef: { name: provider } }),
    });
  }
  const local = await createLocalBackend(aBackendContext(join(folder, "local"), { stopOnClose: "true" }));
  backends.push(local);
  await startEngine("capi-sim", new SimulatedBackend({ provisionDelayMs: 500, deleteDelayMs: 300 }));
  await startEngine("capi-local", local);
}, 300_000);

afterAll(async () => {
  for (const engine of engines) await engine.stop();
  await capi?.stop();
  await controlPlane?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

// --- the objects a Cluster API user applies -------------------------------------------------------

async function applyEngineCluster(
  name: string,
  profile: string,
  metadata: { annotations?: Record<string, string> } = {},
): Promise<EngineCluster> {
  return (await custom.createNamespacedCustomObject({
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
  await createCapiObject(custom, NAMESPACE, "Cluster", name, {
    infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: "EngineCluster", name },
    ...spec,
  });
}

const read = <T>(resource: CustomResource, name: string) =>
  readCustomObject<T>(custom, resource, NAMESPACE, name);
const readEngineCluster = (name: string) => read<EngineCluster>(RESOURCES.EngineCluster, name);
const readCapiCluster = (name: string) => read<CapiCluster>(CAPI_CLUSTER_RESOURCE, name);
const readClusterEndpoint = (name: string) => read<ClusterEndpointObject>(RESOURCES.ClusterEndpoint, name);
const readSecret = (name: string) => orAbsent(core.readNamespacedSecret({ namespace: NAMESPACE, name }));

/** Waits until the CAPI Cluster shows `phase` (CAPI's own controller computes it), failing with what was seen. */
async function capiPhase(name: string, phase: string, timeoutMs = 90_000): Promise<CapiCluster> {
  return eventually(
    async () => {
      const cluster = await readCapiCluster(name);
      if (cluster?.status?.phase !== phase) {
        throw new Error(
          `Cluster ${name} is in phase ${cluster?.status?.phase}; EngineCluster: ${JSON.stringify((await readEngineCluster(name))?.status)}\nCAPI manager log:\n${capi.logTail()}`,
        );
      }
      return cluster;
    },
    { what: `Cluster ${NAMESPACE}/${name} in phase ${phase}`, timeoutMs },
  );
}

const condition = (cluster: EngineCluster | undefined, type: string) =>
  cluster?.status?.conditions?.find((c) => c.type === type);

describe("a CAPI Cluster whose infrastructureRef names an EngineCluster (local backend)", () => {
  it("goes Provisioning → Provisioned as CAPI computes it, with our endpoint, and the workload cluster answers through the kubeconfig Secret", async () => {
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
    expect(condition(infra, "Ready")).toMatchObject({ status: "True" });
    expect(infra?.spec.controlPlaneEndpoint?.host).toBe("127.0.0.1");
    expect(provisioned.spec?.controlPlaneEndpoint).toEqual(infra?.spec.controlPlaneEndpoint);

    const secret = await readSecret("work-kubeconfig");
    expect(secret?.type).toBe("cluster.x-k8s.io/secret");
    expect(secret?.metadata?.labels?.["cluster.x-k8s.io/cluster-name"]).toBe("work");
    const workload = new KubeConfig();
    workload.loadFromString(Buffer.from(secret?.data?.value ?? "", "base64").toString("utf8"));
    expect(workload.getCurrentCluster()?.server).toBe(
      `https://${infra?.spec.controlPlaneEndpoint?.host}:${infra?.spec.controlPlaneEndpoint?.port}`,
    );
    const namespaces = await workload.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");

    const endpoint = await readClusterEndpoint("work");
    expect(endpoint?.spec).toEqual({
      cluster: "work",
      host: infra?.spec.controlPlaneEndpoint?.host,
      port: infra?.spec.controlPlaneEndpoint?.port,
      type: "apiserver",
    });
    expect(endpoint?.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: "EngineCluster", name: "work", uid: infra?.metadata.uid }),
    );
  }, 240_000);

  it("is deleted through the Cluster: CAPI deletes the EngineCluster, we delete at the backend, the finalizer goes, the Cluster is gone", async () => {
    const infra = await readEngineCluster("work");
    expect(infra?.metadata.finalizers).toContain(FINALIZERS.engineCluster);
    await custom.deleteNamespacedCustomObject({
      ...CAPI_CLUSTER_RESOURCE,
      namespace: NAMESPACE,
      name: "work",
    });
    await eventually(async () => expect(await readCapiCluster("work")).toBeUndefined(), {
      what: "Cluster work gone",
      timeoutMs: 120_000,
    });
    expect(await readEngineCluster("work")).toBeUndefined();
    expect(await readSecret("work-kubeconfig")).toBeUndefined();
    expect(await readClusterEndpoint("work")).toBeUndefined();
    const uid = infra?.metadata.uid ?? "";
    expect(calls.get(uid)).toContain("delete");
    expect(await backends[0]?.observe({ ...targetOf(infra), uid })).toEqual({ exists: false });
  }, 180_000);
});

function targetOf(cluster: EngineCluster | undefined): ClusterTarget {
  return {
    uid: cluster?.metadata.uid ?? "",
    namespace: NAMESPACE,
    name: cluster?.metadata.name ?? "",
    tenancy: "Exclusive",
    profile: cluster?.spec.profile ?? "",
    providerConfig: "local",
  };
}

describe("the contract's waits and hands-off rules (simulated backend)", () => {
  it("an EngineCluster no Cluster owns waits, saying so, and the backend is never called", async () => {
    const created = await applyEngineCluster("orphan", "test.capi-sim.sim");
    const waiting = await eventually(
      async () => satisfying(await readEngineCluster("orphan"), (c) => condition(c, "Ready") !== undefined),
      { what: "orphan has a Ready condition" },
    );
    expect(condition(waiting, "Ready")).toMatchObject({ status: "False", reason: "WaitingForClusterOwner" });
    expect(waiting?.metadata.finalizers ?? []).not.toContain(FINALIZERS.engineCluster);
    expect(calls.get(created.metadata.uid ?? "")).toBeUndefined();

    // `explain` covers the kind: the state, the condition and what it waits for, in words.
    let text = "";
    await explain(
      ["enginecluster", `${NAMESPACE}/orphan`, "--kubeconfig", controlPlane.kubeconfigPath],
      (line) => {
        text += `${line}\n`;
      },
    );
    expect(text).toContain("State:        pending");
    expect(text).toContain("WaitingForClusterOwner");
    expect(text).toContain("a Cluster API Cluster that names it in spec.infrastructureRef");
  });

  it("a paused EngineCluster gets only the Paused condition until it is unpaused; a paused Cluster pauses it again", async () => {
    const paused = { annotations: { "cluster.x-k8s.io/paused": "" } };
    const created = await applyEngineCluster("held", "test.capi-sim.sim", paused);
    await applyCapiCluster("held");
    const seen = await eventually(
      async () =>
        satisfying(
          await readEngineCluster("held"),
          (c) => condition(c, "Paused")?.status === "True" && (c?.metadata.ownerReferences?.length ?? 0) > 0,
        ),
      { what: "held Paused and owned by its Cluster" },
    );
    expect(seen?.metadata.ownerReferences?.length).toBe(1); // CAPI owns it, yet nothing happens
    expect(seen?.metadata.finalizers ?? []).not.toContain(FINALIZERS.engineCluster);
    expect(seen?.status?.state).toBeUndefined();
    expect(calls.get(created.metadata.uid ?? "")).toBeUndefined();

    await custom.patchNamespacedCustomObject({
      ...RESOURCES.EngineCluster,
      namespace: NAMESPACE,
      name: "held",
      body: [{ op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" }],
    });
    await capiPhase("held", "Provisioned");

    // Pausing the Cluster pauses its infrastructure: a deleted ClusterEndpoint is not made again meanwhile.
    await custom.patchNamespacedCustomObject({
      ...CAPI_CLUSTER_RESOURCE,
      namespace: NAMESPACE,
      name: "held",
      body: [{ op: "add", path: "/spec/paused", value: true }],
    });
    await eventually(
      async () =>
        expect(condition(await readEngineCluster("held"), "Paused")?.message).toContain("spec.paused"),
      { what: "held paused by its Cluster" },
    );
    const before = (calls.get(created.metadata.uid ?? "") ?? []).length;
    const engine = engines[0] as Engine; // capi-sim, whose config serves "held"
    const reconciledBefore = await reconciles(engine.metrics, "enginecluster");
    await custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterEndpoint,
      namespace: NAMESPACE,
      name: "held",
    });
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
    expect(await readClusterEndpoint("held")).toBeUndefined();
    expect((calls.get(created.metadata.uid ?? "") ?? []).length).toBe(before);

    await custom.patchNamespacedCustomObject({
      ...CAPI_CLUSTER_RESOURCE,
      namespace: NAMESPACE,
      name: "held",
      body: [{ op: "replace", path: "/spec/paused", value: false }],
    });
    await eventually(async () => expect(await readClusterEndpoint("held")).toBeDefined(), {
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
    await custom.patchNamespacedCustomObject({
      ...RESOURCES.EngineCluster,
      namespace: NAMESPACE,
      name: "external",
      body: [{ op: "add", path: "/spec/controlPlaneEndpoint", value: { host: "10.1.2.3", port: 6443 } }],
    });
    await custom.patchNamespacedCustomObjectStatus({
      ...RESOURCES.EngineCluster,
      namespace: NAMESPACE,
      name: "external",
      body: [{ op: "add", path: "/status", value: { initialization: { provisioned: true } } }],
    });
    const cluster = await capiPhase("external", "Provisioned");
    expect(cluster.spec?.controlPlaneEndpoint).toEqual({ host: "10.1.2.3", port: 6443 });
    const infra = await readEngineCluster("external");
    expect(infra?.status).toEqual({ initialization: { provisioned: true } });
    expect(infra?.metadata.finalizers ?? []).not.toContain(FINALIZERS.engineCluster);
    expect(calls.get(created.metadata.uid ?? "")).toBeUndefined();
  }, 120_000);
});

describe("the controller killed with kill -9 mid-provisioning", () => {
  it("orders exactly one cluster at the backend and still reaches Provisioned after the restart", async () => {
    const state = join(folder, "kill");
    const args = engineRunArgs(
      {
        provider: "capi-kill",
        environment: "test",
        kubeconfig: controlPlane.kubeconfigPath,
        stateDir: state,
      },
      "--capi",
      "--backend-option=provisionDelay=4s",
      "--no-schedule",
    );
    // A config of its own: the config "sim" belongs to capi-sim.
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kill-sim", backend: "simulated", providerRef: { name: "capi-kill" } }),
    });
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
              (c?.metadata.finalizers ?? []).includes(FINALIZERS.engineCluster),
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
        expect((await simulated.observe({ ...targetOf(created), providerConfig: "sim" })).exists).toBe(true);
      },
    });
  }, 180_000);
});
