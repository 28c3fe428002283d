/**
 * EngineControlPlane against Cluster API v1.14.2's own core manager on a real API server: Clusters whose
 * controlPlaneRef names our managed control plane, as CAPI computes their conditions.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { CAPI_CLUSTER_RESOURCE } from "../../src/api/cluster-api.ts";
import type { Condition } from "../../src/api/common.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ClusterEndpointObject } from "../../src/api/engine-cluster.ts";
import {
  CONTROLPLANE_API_VERSION,
  CONTROLPLANE_GROUP,
  CONTROLPLANE_RESOURCES,
  ENGINE_CONTROL_PLANE_ANNOTATIONS,
  ENGINE_CONTROL_PLANE_FINALIZER,
  type EngineControlPlane,
} from "../../src/api/engine-control-plane.ts";
import { explain } from "../../src/cli/explain.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { type CapiManager, startCapiManager } from "../../src/dev/capi-manager.ts";
import { createBackend as createLocalBackend } from "../../src/providers/local.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { installCrds, installingCrds } from "../../src/runtime/install-crds.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aProviderConfig } from "../support/builders.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type CustomResource, orAbsent, readCustomObject } from "../support/maybe-absent.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";
import { profileOffered } from "../support/profile-offered.ts";

const NAMESPACE = "ecp";
const INFRA_GROUP = CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure.group;
let controlPlane: ControlPlane;
let capi: CapiManager;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let folder: string;
let local: ClusterBackend;
/** The one Kubernetes version the local backend runs (that of the test's binaries). */
let localVersion: string;
const engines: Engine[] = [];

/** Every backend call, by control plane uid: "no backend call" and "no downgrade ordered" are checked against this. */
const calls = new Map<string, string[]>();
/** While set, the local backend's admin kubeconfig carries this line: new credentials, as far as the engine can tell. */
let rotation: string | undefined;

function recording(backend: ClusterBackend): ClusterBackend {
  const recorded =
    <A extends unknown[], R>(method: string, call: (target: ClusterTarget, ...rest: A) => Promise<R>) =>
    (target: ClusterTarget, ...rest: A): Promise<R> => {
      const detail = typeof rest[0] === "string" ? `${method} ${rest[0]}` : method;
      calls.set(target.uid, [...(calls.get(target.uid) ?? []), detail]);
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
    adminAccess: recorded("adminAccess", async (target) => {
      const access = await backend.adminAccess(target);
      return access && rotation ? { kubeconfig: `${access.kubeconfig}\n# ${rotation}\n` } : access;
    }),
    close: () => backend.close?.() ?? Promise.resolve(),
  };
}
const callsOf = (uid: string | undefined) => calls.get(uid ?? "") ?? [];

async function startEngine(providerName: string, backend: ClusterBackend): Promise<void> {
  const engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName,
    environment: "test",
    backend: recording(backend),
    capi: true,
    timing: { pollMs: 300, retryMs: 2_000, resyncMs: 4_000 },
  });
  engines.push(engine);
  await engine.start();
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "engine-control-plane-"));
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  capi = await startCapiManager({
    kubeConfig: controlPlane.kubeConfig,
    installCrds,
    featureGates: ["ClusterTopology"],
  });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  for (const [name, backend, provider] of [
    ["sim", "simulated", "cp-sim"],
    ["local", "local", "cp-local"],
  ] as const) {
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name, backend, providerRef: { name: provider } }),
    });
  }
  local = await createLocalBackend(aBackendContext(join(folder, "local"), { stopOnClose: "true" }));
  await startEngine(
    "cp-sim",
    new SimulatedBackend({ provisionDelayMs: 500, updateDelayMs: 800, deleteDelayMs: 300 }),
  );
  await startEngine("cp-local", local);
  const profile = await profileOffered(custom, "test.cp-local.local", { what: "the local profile offered" });
  localVersion = profile.spec.supportedVersions[0]?.version ?? "";
}, 300_000);

afterAll(async () => {
  for (const engine of engines) await engine.stop();
  await capi?.stop();
  await controlPlane?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

// --- the objects a Cluster API user applies -------------------------------------------------------

interface CapiClusterSeen {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { controlPlaneEndpoint?: { host: string; port: number }; paused?: boolean };
  status?: {
    phase?: string;
    conditions?: Condition[];
    controlPlane?: { versions?: Array<{ version: string }> };
    initialization?: { controlPlaneInitialized?: boolean; infrastructureProvisioned?: boolean };
  };
}

async function applyControlPlane(
  name: string,
  spec: { profile: string; version: string },
  metadata: { annotations?: Record<string, string> } = {},
): Promise<EngineControlPlane> {
  return (await custom.createNamespacedCustomObject({
    ...CONTROLPLANE_RESOURCES.EngineControlPlane,
    namespace: NAMESPACE,
    body: {
      apiVersion: CONTROLPLANE_API_VERSION,
      kind: "EngineControlPlane",
      metadata: { name, ...metadata },
      spec,
    },
  })) as EngineControlPlane;
}

async function applyInfrastructure(name: string): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure,
    namespace: NAMESPACE,
    body: {
      apiVersion: `${INFRA_GROUP}/v1alpha1`,
      kind: "EngineControlPlaneInfrastructure",
      metadata: { name },
    },
  });
}

async function applyCapiCluster(name: string, options: { infrastructure?: boolean } = {}): Promise<void> {
  await createCapiObject(custom, NAMESPACE, "Cluster", name, {
    controlPlaneRef: { apiGroup: CONTROLPLANE_GROUP, kind: "EngineControlPlane", name },
    ...(options.infrastructure
      ? { infrastructureRef: { apiGroup: INFRA_GROUP, kind: "EngineControlPlaneInfrastructure", name } }
      : {}),
  });
}

const read = <T>(resource: CustomResource, name: string) =>
  readCustomObject<T>(custom, resource, NAMESPACE, name);
const readControlPlane = (name: string) =>
  read<EngineControlPlane>(CONTROLPLANE_RESOURCES.EngineControlPlane, name);
const readCapiCluster = (name: string) => read<CapiClusterSeen>(CAPI_CLUSTER_RESOURCE, name);
const readClusterEndpoint = (name: string) => read<ClusterEndpointObject>(RESOURCES.ClusterEndpoint, name);
const readSecret = (name: string) => orAbsent(core.readNamespacedSecret({ namespace: NAMESPACE, name }));
const patch = (resource: { group: string; version: string; plural: string }, name: string, body: unknown[]) =>
  custom.patchNamespacedCustomObject({ ...resource, namespace: NAMESPACE, name, body });

const conditionOf = (object: { status?: { conditions?: readonly Condition[] } } | undefined, type: string) =>
  object?.status?.conditions?.find((c) => c.type === type);

/** Waits until CAPI's Cluster shows every condition of `wanted` with that status, failing with what was seen. */
async function capiConditions(
  name: string,
  wanted: Readonly<Record<string, Condition["status"]>>,
  timeoutMs = 150_000,
): Promise<CapiClusterSeen> {
  return eventually(
    async () => {
      const cluster = await readCapiCluster(name);
      const off = Object.entries(wanted).filter(
        ([type, status]) => conditionOf(cluster, type)?.status !== status,
      );
      if (off.length > 0) {
        throw new Error(
          `Cluster ${name}: ${off.map(([type]) => `${type}=${JSON.stringify(conditionOf(cluster, type))}`).join("; ")}\nEngineControlPlane: ${JSON.stringify((await readControlPlane(name))?.status)}\nCAPI manager log:\n${capi.logTail(15)}`,
        );
      }
      return cluster as CapiClusterSeen;
    },
    { what: `Cluster ${NAMESPACE}/${name} with ${JSON.stringify(wanted)}`, timeoutMs },
  );
}

async function controlPlaneWhere(
  name: string,
  wanted: (controlPlane: EngineControlPlane | undefined) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<EngineControlPlane> {
  return eventually(async () => satisfying(await readControlPlane(name), wanted) as EngineControlPlane, {
    what: `EngineControlPlane ${name}: ${what}`,
    timeoutMs,
  });
}

function targetOf(controlPlane: EngineControlPlane | undefined, providerConfig: string): ClusterTarget {
  return {
    uid: controlPlane?.metadata.uid ?? "",
    namespace: NAMESPACE,
    name: controlPlane?.metadata.name ?? "",
    tenancy: "Exclusive",
    profile: controlPlane?.spec.profile ?? "",
    providerConfig,
  };
}

describe("a CAPI Cluster whose controlPlaneRef names an EngineControlPlane (local backend)", () => {
  it("without an infrastructureRef: ControlPlaneInitialized, ControlPlaneAvailable and RemoteConnectionProbe True as CAPI computes them, with our endpoint; Available held back only by CAPI v1.14's InfrastructureReady", async () => {
    await applyControlPlane("bare", { profile: "test.cp-local.local", version: `v${localVersion}` });
    await applyCapiCluster("bare");
    const cluster = await capiConditions("bare", {
      ControlPlaneInitialized: "True",
      ControlPlaneAvailable: "True",
      RemoteConnectionProbe: "True",
      WorkersAvailable: "True",
    });
    const ecp = await readControlPlane("bare");
    expect(ecp?.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: "Cluster", name: "bare" }),
    );
    expect(ecp?.status).toMatchObject({
      initialization: { controlPlaneInitialized: true },
      initialized: true,
      externalManagedControlPlane: true,
      version: `v${localVersion}`,
      versions: [{ version: `v${localVersion}` }],
      phase: "Ready",
      state: "running.ready",
    });
    for (const type of ["Available", "Ready", "UpToDate"]) {
      expect(conditionOf(ecp, type), type).toMatchObject({ status: "True" });
    }
    expect(conditionOf(ecp, "Paused")).toMatchObject({ status: "False" });
    expect(ecp?.spec.controlPlaneEndpoint?.host).toBe("127.0.0.1");
    expect(cluster.spec.controlPlaneEndpoint).toEqual(ecp?.spec.controlPlaneEndpoint);
    expect(cluster.status?.phase).toBe("Provisioned");
    expect(cluster.status?.initialization).toEqual({
      controlPlaneInitialized: true,
      infrastructureProvisioned: true,
    });
    expect(cluster.status?.controlPlane?.versions).toEqual([{ version: `v${localVersion}` }]);

    // Cluster API v1.14.2 has no case for a Cluster with neither infrastructureRef nor topology in its
    // InfrastructureReady condition: it stays Unknown, and that alone keeps Available from turning True.
    expect(conditionOf(cluster, "InfrastructureReady")).toMatchObject({
      status: "Unknown",
      reason: "InternalError",
    });
    const available = conditionOf(cluster, "Available");
    expect(available?.status).toBe("Unknown");
    expect(available?.message.split("\n").filter((line) => line.startsWith("* "))).toEqual([
      "* InfrastructureReady: Please check controller logs for errors",
    ]);

    // The kubeconfig Secret the contract gives the control plane: CAPI's cluster cache reached the workload with it.
    const secret = await readSecret("bare-kubeconfig");
    expect(secret?.type).toBe("cluster.x-k8s.io/secret");
    expect(secret?.metadata?.labels?.["cluster.x-k8s.io/cluster-name"]).toBe("bare");
    expect(secret?.metadata?.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: "EngineControlPlane", name: "bare", uid: ecp?.metadata.uid }),
    );
    const workload = new KubeConfig();
    workload.loadFromString(Buffer.from(secret?.data?.value ?? "", "base64").toString("utf8"));
    expect(workload.getCurrentCluster()?.server).toBe(
      `https://${ecp?.spec.controlPlaneEndpoint?.host}:${ecp?.spec.controlPlaneEndpoint?.port}`,
    );
    const namespaces = await workload.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");

    // The endpoint's owner publishes the ClusterEndpoint: here the control plane.
    const endpoint = await readClusterEndpoint("bare");
    expect(endpoint?.spec).toEqual({
      cluster: "bare",
      host: ecp?.spec.controlPlaneEndpoint?.host,
      port: ecp?.spec.controlPlaneEndpoint?.port,
      type: "apiserver",
    });
    expect(endpoint?.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: "EngineControlPlane", name: "bare", uid: ecp?.metadata.uid }),
    );
    expect(callsOf(ecp?.metadata.uid).filter((call) => call.startsWith("create"))).toEqual([
      `create ${localVersion}`,
    ]);
  }, 240_000);

  it("with an EngineControlPlaneInfrastructure as its infrastructureRef, the Cluster is Available as CAPI computes it", async () => {
    await applyControlPlane("full", { profile: "test.cp-local.local", version: localVersion });
    await applyInfrastructure("full");
    await applyCapiCluster("full", { infrastructure: true });
    const cluster = await capiConditions("full", {
      Available: "True",
      InfrastructureReady: "True",
      ControlPlaneInitialized: "True",
      ControlPlaneAvailable: "True",
      RemoteConnectionProbe: "True",
    });
    expect(cluster.status?.phase).toBe("Provisioned");
    expect(cluster.spec.controlPlaneEndpoint).toEqual(
      (await readControlPlane("full"))?.spec.controlPlaneEndpoint,
    );

    // `explain` covers the kind.
    let text = "";
    await explain(["ecp", `${NAMESPACE}/full`, "--kubeconfig", controlPlane.kubeconfigPath], (line) => {
      text += `${line}\n`;
    });
    expect(text).toContain("State:        running.ready");
    expect(text).toContain("Available=True");
  }, 240_000);

  it("rewrites the kubeconfig Secret when the backend's admin credentials change, and CAPI keeps reaching the workload", async () => {
    const before = await readSecret("full-kubeconfig");
    const fingerprint = before?.metadata?.annotations?.[ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256];
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    rotation = "credentials rotated by the backend";
    try {
      const after = await eventually(
        async () =>
          satisfying(await readSecret("full-kubeconfig"), (secret) =>
            Buffer.from(secret?.data?.value ?? "", "base64")
              .toString("utf8")
              .includes(rotation ?? "?"),
          ),
        { what: "the Secret holding the new admin kubeconfig", timeoutMs: 30_000 },
      );
      expect(after?.metadata?.annotations?.[ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256]).not.toBe(
        fingerprint,
      );
      const workload = new KubeConfig();
      workload.loadFromString(Buffer.from(after?.data?.value ?? "", "base64").toString("utf8"));
      await workload.makeApiClient(CoreV1Api).listNamespace();
      await capiConditions("full", { RemoteConnectionProbe: "True", Available: "True" });
    } finally {
      rotation = undefined;
    }
  }, 120_000);

  it("is deleted through the Cluster: CAPI deletes the EngineControlPlane, we delete at the backend and publish nothing more", async () => {
    for (const name of ["bare", "full"]) {
      const ecp = await readControlPlane(name);
      expect(ecp?.metadata.finalizers).toContain(ENGINE_CONTROL_PLANE_FINALIZER);
      await custom.deleteNamespacedCustomObject({ ...CAPI_CLUSTER_RESOURCE, namespace: NAMESPACE, name });
      await eventually(async () => expect(await readCapiCluster(name)).toBeUndefined(), {
        what: `Cluster ${name} gone`,
        timeoutMs: 120_000,
      });
      expect(await readControlPlane(name)).toBeUndefined();
      expect(await readSecret(`${name}-kubeconfig`)).toBeUndefined();
      expect(await readClusterEndpoint(name)).toBeUndefined();
      expect(callsOf(ecp?.metadata.uid)).toContain("delete");
      expect(await local.observe(targetOf(ecp, "local"))).toEqual({ exists: false });
    }
    expect(await read(CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure, "full")).toBeUndefined();
  }, 300_000);
});

describe("versions and pausing (simulated backend)", () => {
  it("upgrades through spec.version, refuses a downgrade with a condition while staying available, and never orders it", async () => {
    const created = await applyControlPlane("versions", { profile: "test.cp-sim.sim", version: "1.33" });
    await applyInfrastructure("versions");
    await applyCapiCluster("versions", { infrastructure: true });
    await capiConditions(
      "versions",
      { ControlPlaneInitialized: "True", ControlPlaneAvailable: "True" },
      60_000,
    );
    await controlPlaneWhere("versions", (c) => c?.status?.version === "v1.33.6", "on v1.33.6");

    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
      { op: "replace", path: "/spec/version", value: "v1.34.2" },
    ]);
    const upgraded = await controlPlaneWhere(
      "versions",
      (c) => c?.status?.version === "v1.34.2" && c.status.state === "running.ready",
      "upgraded to v1.34.2",
    );
    expect(conditionOf(upgraded, "UpToDate")).toMatchObject({ status: "True" });
    expect(callsOf(created.metadata.uid)).toContain("update 1.34.2");
    await eventually(
      async () =>
        expect((await readCapiCluster("versions"))?.status?.controlPlane?.versions).toEqual([
          { version: "v1.34.2" },
        ]),
      { what: "CAPI's Cluster showing the new version" },
    );

    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
      { op: "replace", path: "/spec/version", value: "1.33.6" },
    ]);
    const refused = await controlPlaneWhere(
      "versions",
      (c) => conditionOf(c, "UpToDate")?.reason === "DowngradeNotAllowed",
      "refusing the downgrade",
    );
    expect(refused.status?.state).toBe("running.refused");
    expect(conditionOf(refused, "UpToDate")?.message).toContain("downgrades are not supported");
    expect(conditionOf(refused, "Available")).toMatchObject({ status: "True" });
    expect(refused.status?.version).toBe("v1.34.2");
    expect(callsOf(created.metadata.uid)).not.toContain("update 1.33.6");
    await capiConditions("versions", { ControlPlaneAvailable: "True" });

    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
      { op: "replace", path: "/spec/version", value: "1.34" },
    ]);
    await controlPlaneWhere(
      "versions",
      (c) => c?.status?.state === "running.ready" && conditionOf(c, "UpToDate")?.status === "True",
      "up to date again",
    );
  }, 120_000);

  it("a paused EngineControlPlane gets only the Paused condition and no backend call; a paused Cluster pauses it again", async () => {
    const paused = { annotations: { "cluster.x-k8s.io/paused": "" } };
    const created = await applyControlPlane("held", { profile: "test.cp-sim.sim", version: "1.34" }, paused);
    await applyCapiCluster("held");
    const seen = await controlPlaneWhere(
      "held",
      (c) => conditionOf(c, "Paused")?.status === "True" && (c?.metadata.ownerReferences?.length ?? 0) > 0,
      "Paused and owned by its Cluster",
    );
    expect(seen.metadata.finalizers ?? []).not.toContain(ENGINE_CONTROL_PLANE_FINALIZER);
    expect(seen.status?.state).toBeUndefined();
    expect(callsOf(created.metadata.uid)).toEqual([]);

    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" },
    ]);
    await capiConditions("held", { ControlPlaneInitialized: "True", ControlPlaneAvailable: "True" }, 60_000);

    // Pausing the Cluster pauses its control plane: a deleted ClusterEndpoint is not made again meanwhile.
    await patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "add", path: "/spec/paused", value: true }]);
    await controlPlaneWhere(
      "held",
      (c) => conditionOf(c, "Paused")?.message.includes("spec.paused") === true,
      "paused by its Cluster",
    );
    const before = callsOf(created.metadata.uid).length;
    await custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterEndpoint,
      namespace: NAMESPACE,
      name: "held",
    });
    // A positive signal that the engine looked after the deletion: the annotation changes why it is paused.
    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "add", path: "/metadata/annotations", value: { "cluster.x-k8s.io/paused": "" } },
    ]);
    await controlPlaneWhere(
      "held",
      (c) => conditionOf(c, "Paused")?.message.includes("annotation") === true,
      "paused by its annotation",
    );
    expect(await readClusterEndpoint("held")).toBeUndefined();
    expect(callsOf(created.metadata.uid).length).toBe(before);

    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" },
    ]);
    await patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "replace", path: "/spec/paused", value: false }]);
    await eventually(async () => expect(await readClusterEndpoint("held")).toBeDefined(), {
      what: "ClusterEndpoint held published again",
    });
    // The endpoint is a command of the same reconcile whose status write says unpaused: look until both show.
    await eventually(
      async () =>
        expect(conditionOf(await readControlPlane("held"), "Paused")).toMatchObject({ status: "False" }),
      { what: "Paused=False on held" },
    );
  }, 120_000);
});

describe("the controller killed with kill -9 mid-provisioning", () => {
  it("orders exactly one control plane at the backend and still initializes it after the restart", async () => {
    const state = join(folder, "kill");
    const args = engineRunArgs(
      { provider: "cp-kill", environment: "test", kubeconfig: controlPlane.kubeconfigPath, stateDir: state },
      "--capi",
      "--backend-option=provisionDelay=4s",
      "--no-schedule",
    );
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kill-sim", backend: "simulated", providerRef: { name: "cp-kill" } }),
    });
    const first = startEngineCli(args);
    const created = await applyControlPlane("survivor", {
      profile: "test.cp-kill.kill-sim",
      version: "1.34",
    });
    await applyCapiCluster("survivor");
    await controlPlaneWhere(
      "survivor",
      (c) => (c?.metadata.finalizers ?? []).includes(ENGINE_CONTROL_PLANE_FINALIZER),
      "holding our finalizer (the control plane is ordered)",
    );
    await eventually(() => first.output().includes('"command":"create"'), { what: "the create logged" });
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = startEngineCli(args);
    try {
      await capiConditions(
        "survivor",
        { ControlPlaneInitialized: "True", ControlPlaneAvailable: "True" },
        90_000,
      );
      const simulated = new SimulatedBackend({ stateDirectory: join(state, "simulated") });
      expect(simulated.createdTotal, `${first.output()}\n---\n${second.output()}`).toBe(1);
      expect((await simulated.observe(targetOf(created, "kill-sim"))).exists).toBe(true);
    } finally {
      second.child.kill("SIGTERM");
      await new Promise((resolve) => second.child.once("exit", resolve));
    }
  }, 180_000);
});

describe("ClusterClasses (Cluster API's topology controller)", () => {
  const TEMPLATE_API = { group: CONTROLPLANE_GROUP, version: "v1alpha1" };
  async function applyClass(name: string, profile: string): Promise<void> {
    await custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlaneTemplate,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${TEMPLATE_API.group}/${TEMPLATE_API.version}`,
        kind: "EngineControlPlaneTemplate",
        metadata: { name },
        spec: { template: { spec: { profile } } },
      },
    });
    await custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructureTemplate,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${INFRA_GROUP}/v1alpha1`,
        kind: "EngineControlPlaneInfrastructureTemplate",
        metadata: { name },
        spec: { template: {} },
      },
    });
    await createCapiObject(custom, NAMESPACE, "ClusterClass", name, {
      controlPlane: {
        templateRef: { apiVersion: CONTROLPLANE_API_VERSION, kind: "EngineControlPlaneTemplate", name },
      },
      infrastructure: {
        templateRef: {
          apiVersion: `${INFRA_GROUP}/v1alpha1`,
          kind: "EngineControlPlaneInfrastructureTemplate",
          name,
        },
      },
    });
  }
  async function applyTopologyCluster(name: string, className: string, version: string): Promise<void> {
    await createCapiObject(custom, NAMESPACE, "Cluster", name, {
      topology: { classRef: { name: className }, version },
    });
  }
  /** The EngineControlPlane the topology controller made for Cluster `name`. */
  async function topologyControlPlane(name: string): Promise<EngineControlPlane> {
    return eventually(
      async () => {
        const cluster = (await readCapiCluster(name)) as CapiClusterSeen & {
          spec: { controlPlaneRef?: { name?: string } };
        };
        const ref = cluster.spec.controlPlaneRef?.name;
        if (!ref)
          throw new Error(`Cluster ${name} has no controlPlaneRef yet: ${JSON.stringify(cluster.status)}`);
        return (await readControlPlane(ref)) as EngineControlPlane;
      },
      { what: `the topology's EngineControlPlane of ${name}`, timeoutMs: 60_000 },
    );
  }

  it("Cluster API v1.14.2's own ClusterClass CRD refuses a class without an infrastructure template", async () => {
    const refused = createCapiObject(custom, NAMESPACE, "ClusterClass", "no-infrastructure", {
      controlPlane: {
        templateRef: {
          apiVersion: CONTROLPLANE_API_VERSION,
          kind: "EngineControlPlaneTemplate",
          name: "x",
        },
      },
    });
    await expect(refused).rejects.toMatchObject({ code: 422 });
    await expect(refused).rejects.toThrow(/spec\.infrastructure: Required value/);
  });

  it("a ClusterClass of EngineControlPlaneTemplate and EngineControlPlaneInfrastructureTemplate makes a topology Cluster Available (local backend)", async () => {
    await applyClass("local-class", "test.cp-local.local");
    await applyTopologyCluster("topo", "local-class", `v${localVersion}`);
    const cluster = await capiConditions("topo", {
      Available: "True",
      TopologyReconciled: "True",
      ControlPlaneAvailable: "True",
      RemoteConnectionProbe: "True",
    });
    const ecp = await topologyControlPlane("topo");
    expect(ecp.spec.version).toBe(`v${localVersion}`);
    expect(cluster.spec.controlPlaneEndpoint).toEqual(ecp.spec.controlPlaneEndpoint);

    await custom.deleteNamespacedCustomObject({
      ...CAPI_CLUSTER_RESOURCE,
      namespace: NAMESPACE,
      name: "topo",
    });
    await eventually(async () => expect(await readCapiCluster("topo")).toBeUndefined(), {
      what: "topology Cluster topo gone",
      timeoutMs: 120_000,
    });
    expect(await local.observe(targetOf(ecp, "local"))).toEqual({ exists: false });
  }, 300_000);

  it("upgrades through the topology's version (simulated backend)", async () => {
    await applyClass("sim-class", "test.cp-sim.sim");
    await applyTopologyCluster("topo-sim", "sim-class", "v1.33.6");
    await capiConditions("topo-sim", { ControlPlaneAvailable: "True", TopologyReconciled: "True" }, 90_000);
    const ecp = await topologyControlPlane("topo-sim");
    expect(ecp.status?.version).toBe("v1.33.6");
    await patch(CAPI_CLUSTER_RESOURCE, "topo-sim", [
      { op: "replace", path: "/spec/topology/version", value: "v1.34.2" },
    ]);
    const upgraded = await controlPlaneWhere(
      ecp.metadata.name ?? "",
      (c) =>
        c?.spec.version === "v1.34.2" &&
        c.status?.version === "v1.34.2" &&
        c.status.state === "running.ready",
      "upgraded by the topology to v1.34.2",
      90_000,
    );
    expect(callsOf(upgraded.metadata.uid)).toContain("update 1.34.2");
    await capiConditions("topo-sim", { TopologyReconciled: "True", ControlPlaneAvailable: "True" });
  }, 180_000);
});

describe("the CRDs refuse what the contract forbids, naming it", () => {
  const create = (body: Record<string, unknown>) =>
    custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlane,
      namespace: NAMESPACE,
      body: { apiVersion: CONTROLPLANE_API_VERSION, kind: "EngineControlPlane", ...body },
    });

  it("an EngineControlPlane without spec.version, or with one that is no version", async () => {
    await expect(create({ metadata: { name: "no-version" }, spec: { profile: "p" } })).rejects.toThrow(
      /spec.version: Required value/,
    );
    await expect(
      create({ metadata: { name: "bad-version" }, spec: { profile: "p", version: "latest" } }),
    ).rejects.toThrow(/spec.version in body should match/);
  });

  it("a changed profile, and a changed or removed controlPlaneEndpoint once set", async () => {
    await create({
      metadata: { name: "fixed" },
      spec: { profile: "p", version: "1.34", controlPlaneEndpoint: { host: "10.1.2.3", port: 6443 } },
    });
    const refused = async (body: unknown[], message: RegExp) =>
      expect(patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "fixed", body)).rejects.toThrow(message);
    await refused([{ op: "replace", path: "/spec/profile", value: "q" }], /profile is immutable/);
    await refused(
      [{ op: "replace", path: "/spec/controlPlaneEndpoint/host", value: "10.1.2.4" }],
      /controlPlaneEndpoint is immutable once set/,
    );
    await refused(
      [{ op: "remove", path: "/spec/controlPlaneEndpoint" }],
      /controlPlaneEndpoint is immutable once set/,
    );
    // spec.version may change: that is how an upgrade is asked for.
    await patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "fixed", [
      { op: "replace", path: "/spec/version", value: "1.35" },
    ]);
  });

  it("an EngineControlPlaneInfrastructure reported unprovisioned (and it keeps nothing in spec)", async () => {
    const resource = { ...CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure, namespace: NAMESPACE };
    const body = (name: string, spec?: object) => ({
      apiVersion: `${INFRA_GROUP}/v1alpha1`,
      kind: "EngineControlPlaneInfrastructure",
      metadata: { name },
      ...(spec ? { spec } : {}),
    });
    // Nothing to ask for: a field in spec is not kept (the schema has none).
    const asking = (await custom.createNamespacedCustomObject({
      ...resource,
      body: body("asks", { vpc: "x" }),
    })) as { spec?: unknown };
    expect(asking.spec).toEqual({});
    const created = (await custom.createNamespacedCustomObject({ ...resource, body: body("plain") })) as {
      status?: unknown;
    };
    expect(created.status).toEqual({ initialization: { provisioned: true } });
    await expect(
      custom.patchNamespacedCustomObjectStatus({
        ...resource,
        name: "plain",
        body: [{ op: "replace", path: "/status/initialization/provisioned", value: false }],
      }),
    ).rejects.toThrow(/there is nothing to provision, so provisioned is always true/);
  });
});
