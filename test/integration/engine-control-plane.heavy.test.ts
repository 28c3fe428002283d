/**
 * EngineControlPlane against Cluster API v1.14.2's own core manager on a real API server: Clusters whose
 * controlPlaneRef names our managed control plane, as CAPI computes their conditions.
 */
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPI_CLUSTER_RESOURCE } from "../../src/api/cluster-api.ts";
import type { Condition } from "../../src/api/common.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import {
  CONTROLPLANE_API_VERSION,
  CONTROLPLANE_GROUP,
  CONTROLPLANE_RESOURCES,
  ENGINE_CONTROL_PLANE_ANNOTATIONS,
  ENGINE_CONTROL_PLANE_FINALIZER,
  type EngineControlPlane,
} from "../../src/api/engine-control-plane.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import {
  expectClusterEndpoint,
  expectDeletedThroughCluster,
  expectWorkloadKubeconfig,
} from "../support/capi-contract-checks.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { type CapiProviderWorld, startCapiProviderWorld } from "../support/capi-provider-world.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { explained } from "../support/explained.ts";
import { startEngineCli } from "../support/processes.ts";
import { profileOffered } from "../support/profile-offered.ts";

const NAMESPACE = "ecp";
const INFRA_GROUP = CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure.group;
let world: CapiProviderWorld;
/** The one Kubernetes version the local backend runs (that of the test's binaries). */
let localVersion: string;

beforeAll(async () => {
  world = await startCapiProviderWorld({
    namespace: NAMESPACE,
    provider: "cp",
    simulated: { provisionDelayMs: 500, updateDelayMs: 800, deleteDelayMs: 300 },
    resyncMs: 4_000,
    featureGates: ["ClusterTopology"],
  });
  const profile = await profileOffered(world.custom, "test.cp-local.local", {
    what: "the local profile offered",
  });
  localVersion = profile.spec.supportedVersions[0]?.version ?? "";
}, 300_000);

afterAll(async () => {
  await world?.stop();
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
  return (await world.custom.createNamespacedCustomObject({
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
  await world.custom.createNamespacedCustomObject({
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
  await createCapiObject(world.custom, NAMESPACE, "Cluster", name, {
    controlPlaneRef: { apiGroup: CONTROLPLANE_GROUP, kind: "EngineControlPlane", name },
    ...(options.infrastructure
      ? { infrastructureRef: { apiGroup: INFRA_GROUP, kind: "EngineControlPlaneInfrastructure", name } }
      : {}),
  });
}

const readControlPlane = (name: string) =>
  world.read<EngineControlPlane>(CONTROLPLANE_RESOURCES.EngineControlPlane, name);
const readCapiCluster = (name: string) => world.read<CapiClusterSeen>(CAPI_CLUSTER_RESOURCE, name);

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
          `Cluster ${name}: ${off.map(([type]) => `${type}=${JSON.stringify(conditionOf(cluster, type))}`).join("; ")}\nEngineControlPlane: ${JSON.stringify((await readControlPlane(name))?.status)}\nCAPI manager log:\n${world.capi.logTail(15)}`,
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

// The describe blocks run side by side (their objects have names of their own; each test reads only the backend calls
// of its own objects' uids); one after the other they took the sum of their times, mostly waiting on Cluster API's
// manager and the backends. Inside this block the tests build on each other, in order.
describe.concurrent("a CAPI Cluster whose controlPlaneRef names an EngineControlPlane (local backend)", () => {
  /** This block's tests, one after the other. */
  const inOrder = (timeout: number) => ({ concurrent: false, timeout });
  it(
    "without an infrastructureRef: ControlPlaneInitialized, ControlPlaneAvailable and RemoteConnectionProbe True as CAPI computes them, with our endpoint; Available held back only by CAPI v1.14's InfrastructureReady",
    inOrder(240_000),
    async () => {
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
      const owner = { kind: "EngineControlPlane", name: "bare", uid: ecp?.metadata.uid };
      const secret = await expectWorkloadKubeconfig(world, "bare", ecp?.spec.controlPlaneEndpoint);
      expect(secret?.metadata?.ownerReferences).toContainEqual(expect.objectContaining(owner));

      // The endpoint's owner publishes the ClusterEndpoint: here the control plane.
      await expectClusterEndpoint(world, "bare", ecp?.spec.controlPlaneEndpoint, owner);
      expect(world.callsOf(ecp?.metadata.uid).filter((call) => call.startsWith("create"))).toEqual([
        `create ${localVersion}`,
      ]);
    },
  );

  it(
    "with an EngineControlPlaneInfrastructure as its infrastructureRef, the Cluster is Available as CAPI computes it",
    inOrder(240_000),
    async () => {
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
      const text = await explained("ecp", `${NAMESPACE}/full`, world.controlPlane.kubeconfigPath);
      expect(text).toContain("State:        running.ready");
      expect(text).toContain("Available=True");
    },
  );

  it(
    "rewrites the kubeconfig Secret when the backend's admin credentials change, and CAPI keeps reaching the workload",
    inOrder(120_000),
    async () => {
      const before = await world.readSecret("full-kubeconfig");
      const fingerprint = before?.metadata?.annotations?.[ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256];
      expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
      const rotation = "credentials rotated by the backend";
      world.rotateAdminKubeconfig(rotation);
      try {
        const after = await eventually(
          async () =>
            satisfying(await world.readSecret("full-kubeconfig"), (secret) =>
              Buffer.from(secret?.data?.value ?? "", "base64")
                .toString("utf8")
                .includes(rotation),
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
        world.rotateAdminKubeconfig(undefined);
      }
    },
  );

  it(
    "is deleted through the Cluster: CAPI deletes the EngineControlPlane, we delete at the backend and publish nothing more",
    inOrder(300_000),
    async () => {
      for (const name of ["bare", "full"]) {
        const ecp = await readControlPlane(name);
        expect(ecp?.metadata.finalizers).toContain(ENGINE_CONTROL_PLANE_FINALIZER);
        await expectDeletedThroughCluster(world, name, CONTROLPLANE_RESOURCES.EngineControlPlane, ecp);
      }
      expect(
        await world.read(CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure, "full"),
      ).toBeUndefined();
    },
  );
});

describe.concurrent("versions and pausing (simulated backend)", () => {
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

    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
      { op: "replace", path: "/spec/version", value: "v1.34.2" },
    ]);
    const upgraded = await controlPlaneWhere(
      "versions",
      (c) => c?.status?.version === "v1.34.2" && c.status.state === "running.ready",
      "upgraded to v1.34.2",
    );
    expect(conditionOf(upgraded, "UpToDate")).toMatchObject({ status: "True" });
    expect(world.callsOf(created.metadata.uid)).toContain("update 1.34.2");
    await eventually(
      async () =>
        expect((await readCapiCluster("versions"))?.status?.controlPlane?.versions).toEqual([
          { version: "v1.34.2" },
        ]),
      { what: "CAPI's Cluster showing the new version" },
    );

    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
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
    expect(world.callsOf(created.metadata.uid)).not.toContain("update 1.33.6");
    await capiConditions("versions", { ControlPlaneAvailable: "True" });

    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "versions", [
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
    expect(world.callsOf(created.metadata.uid)).toEqual([]);

    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" },
    ]);
    await capiConditions("held", { ControlPlaneInitialized: "True", ControlPlaneAvailable: "True" }, 60_000);

    // Pausing the Cluster pauses its control plane: a deleted ClusterEndpoint is not made again meanwhile.
    await world.patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "add", path: "/spec/paused", value: true }]);
    await controlPlaneWhere(
      "held",
      (c) => conditionOf(c, "Paused")?.message.includes("spec.paused") === true,
      "paused by its Cluster",
    );
    const before = world.callsOf(created.metadata.uid).length;
    await world.remove(RESOURCES.ClusterEndpoint, "held");
    // A positive signal that the engine looked after the deletion: the annotation changes why it is paused.
    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "add", path: "/metadata/annotations", value: { "cluster.x-k8s.io/paused": "" } },
    ]);
    await controlPlaneWhere(
      "held",
      (c) => conditionOf(c, "Paused")?.message.includes("annotation") === true,
      "paused by its annotation",
    );
    expect(await world.readClusterEndpoint("held")).toBeUndefined();
    expect(world.callsOf(created.metadata.uid).length).toBe(before);

    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "held", [
      { op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" },
    ]);
    await world.patch(CAPI_CLUSTER_RESOURCE, "held", [{ op: "replace", path: "/spec/paused", value: false }]);
    await eventually(async () => expect(await world.readClusterEndpoint("held")).toBeDefined(), {
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

describe.concurrent("the controller killed with kill -9 mid-provisioning", () => {
  it("orders exactly one control plane at the backend and still initializes it after the restart", async () => {
    const { args, state } = await world.engineProcess();
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
      expect((await simulated.observe(world.targetOf(created, "kill-sim"))).exists).toBe(true);
    } finally {
      second.child.kill("SIGTERM");
      await new Promise((resolve) => second.child.once("exit", resolve));
    }
  }, 180_000);
});

describe.concurrent("ClusterClasses (Cluster API's topology controller)", () => {
  const TEMPLATE_API = { group: CONTROLPLANE_GROUP, version: "v1alpha1" };
  async function applyClass(name: string, profile: string): Promise<void> {
    await world.custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlaneTemplate,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${TEMPLATE_API.group}/${TEMPLATE_API.version}`,
        kind: "EngineControlPlaneTemplate",
        metadata: { name },
        spec: { template: { spec: { profile } } },
      },
    });
    await world.custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructureTemplate,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${INFRA_GROUP}/v1alpha1`,
        kind: "EngineControlPlaneInfrastructureTemplate",
        metadata: { name },
        spec: { template: {} },
      },
    });
    await createCapiObject(world.custom, NAMESPACE, "ClusterClass", name, {
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
    await createCapiObject(world.custom, NAMESPACE, "Cluster", name, {
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
    const refused = createCapiObject(world.custom, NAMESPACE, "ClusterClass", "no-infrastructure", {
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

    await world.remove(CAPI_CLUSTER_RESOURCE, "topo");
    await eventually(async () => expect(await readCapiCluster("topo")).toBeUndefined(), {
      what: "topology Cluster topo gone",
      timeoutMs: 120_000,
    });
    expect(await world.local.observe(world.targetOf(ecp, "local"))).toEqual({ exists: false });
  }, 300_000);

  it("upgrades through the topology's version (simulated backend)", async () => {
    await applyClass("sim-class", "test.cp-sim.sim");
    await applyTopologyCluster("topo-sim", "sim-class", "v1.33.6");
    await capiConditions("topo-sim", { ControlPlaneAvailable: "True", TopologyReconciled: "True" }, 90_000);
    const ecp = await topologyControlPlane("topo-sim");
    expect(ecp.status?.version).toBe("v1.33.6");
    await world.patch(CAPI_CLUSTER_RESOURCE, "topo-sim", [
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
    expect(world.callsOf(upgraded.metadata.uid)).toContain("update 1.34.2");
    await capiConditions("topo-sim", { TopologyReconciled: "True", ControlPlaneAvailable: "True" });
  }, 180_000);
});

describe.concurrent("the CRDs refuse what the contract forbids, naming it", () => {
  const create = (body: Record<string, unknown>) =>
    world.custom.createNamespacedCustomObject({
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
      expect(world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "fixed", body)).rejects.toThrow(message);
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
    await world.patch(CONTROLPLANE_RESOURCES.EngineControlPlane, "fixed", [
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
    const asking = (await world.custom.createNamespacedCustomObject({
      ...resource,
      body: body("asks", { vpc: "x" }),
    })) as { spec?: unknown };
    expect(asking.spec).toEqual({});
    const created = (await world.custom.createNamespacedCustomObject({
      ...resource,
      body: body("plain"),
    })) as {
      status?: unknown;
    };
    expect(created.status).toEqual({ initialization: { provisioned: true } });
    await expect(
      world.custom.patchNamespacedCustomObjectStatus({
        ...resource,
        name: "plain",
        body: [{ op: "replace", path: "/status/initialization/provisioned", value: false }],
      }),
    ).rejects.toThrow(/there is nothing to provision, so provisioned is always true/);
  });
});
