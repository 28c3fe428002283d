/** A Cluster as a CAPI topology Cluster: its name, the desired object, the smallest change, Cluster API's view, the class's offer. */
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import {
  CAPI_HIBERNATED_REPLICAS_ANNOTATION,
  CAPI_SLEEPING_MACHINES_ANNOTATION,
  CAPI_WAKING_REPLICAS_ANNOTATION,
} from "../../../src/api/constants/hibernation.ts";
import { capiSettings } from "../../../src/providers/capi-settings.ts";
import {
  type DockerMachine,
  hibernationObservation,
  hibernationPatch,
  machinesAsleepObservation,
  pausePatch,
  wakePatch,
} from "../../../src/providers/capi-sleep.ts";
import {
  CAPI_BACKEND_KEYS,
  type ClusterClass,
  capiClusterName,
  classProblem,
  classTraits,
  desiredTopologyCluster,
  offeredVersions,
  type Topology,
  type TopologyCluster,
  topologyChanges,
  topologyObservation,
} from "../../../src/providers/capi-topology.ts";
import { aClusterTarget, TENANT_METADATA } from "../../support/builders.ts";

const target = aClusterTarget({ providerConfig: "capi", ...TENANT_METADATA });
const settings = capiSettings(
  {
    clusterClass: { namespace: "classes", name: "docker-kubeadm" },
    namespace: "clusters",
    controlPlane: { replicas: 1 },
    workers: [{ class: "default-worker", name: "md-0", replicas: 1 }],
    variables: [{ name: "team", value: "blue" }],
    metadata: { labels: { owner: "platform" } },
  },
  "capi",
);

describe("capiClusterName", () => {
  it("is readable, short, a DNS label starting with a letter, stable, and differs per Cluster (not per uid)", () => {
    const name = capiClusterName(target);
    expect(name).toMatch(/^dev-[0-9a-f]{8}$/);
    expect(capiClusterName({ ...target })).toBe(name);
    expect(capiClusterName({ namespace: "team-b", name: "dev" })).not.toBe(name);
    const long = capiClusterName({ namespace: "n", name: "a-very-long-cluster-name-that-goes-on-and-on" });
    expect(long.length).toBeLessThanOrEqual(29);
    expect(long).toMatch(/^[a-z][-a-z0-9]*[a-z0-9]$/);
    expect(capiClusterName({ namespace: "n", name: "1st" })).toMatch(/^c1st-[0-9a-f]{8}$/);
  });
});

describe("desiredTopologyCluster", () => {
  it("asks the class for the version, replicas, workers and variables, labelled with the Cluster and openMCP's metadata", () => {
    const desired = desiredTopologyCluster(target, settings, "1.36.3");
    expect(desired.metadata).toEqual({
      name: capiClusterName(target),
      namespace: "clusters",
      labels: {
        owner: "platform",
        "metadata.open-control-plane.io/tenant": "acme",
        [CAPI_BACKEND_KEYS.clusterUidLabel]: "u-1",
        [CAPI_BACKEND_KEYS.clusterNamespaceLabel]: "team-a",
        [CAPI_BACKEND_KEYS.clusterNameLabel]: "dev",
        [CAPI_BACKEND_KEYS.providerConfigLabel]: "capi",
      },
      annotations: { "metadata.open-control-plane.io/owner": "bob" },
    });
    expect(desired.spec.topology).toEqual({
      classRef: { name: "docker-kubeadm", namespace: "classes" },
      version: "v1.36.3",
      controlPlane: { replicas: 1 },
      workers: { machineDeployments: [{ class: "default-worker", name: "md-0", replicas: 1 }] },
      variables: [{ name: "team", value: "blue" }],
    });
  });
});

describe("topologyChanges", () => {
  const desired = desiredTopologyCluster(target, settings, "1.36.3");
  // What Cluster API keeps: ours, plus a variable a defaulting webhook added and a resourceVersion.
  const stored: TopologyCluster = {
    ...desired,
    metadata: {
      ...desired.metadata,
      resourceVersion: "7",
      labels: { ...desired.metadata.labels, extra: "kept" },
    },
    spec: {
      ...desired.spec,
      topology: {
        ...(desired.spec.topology as Topology),
        variables: [
          { name: "team", value: "blue" },
          { name: "podSecurity", value: { enabled: true } },
        ],
      },
    },
  };

  it("finds nothing to change when Cluster API holds what the engine wants (defaults beside it do not count)", () => {
    expect(topologyChanges(stored, desired)).toBeUndefined();
  });

  it("raises the version alone when only the version differs", () => {
    expect(topologyChanges(stored, desiredTopologyCluster(target, settings, "1.37.0"))).toEqual({
      spec: { topology: { version: "v1.37.0" } },
    });
  });

  it("refuses to lower the version", () => {
    expect(() => topologyChanges(stored, desiredTopologyCluster(target, settings, "1.35.9"))).toThrow(
      /runs Kubernetes 1\.36\.3; the engine does not downgrade it to 1\.35\.9/,
    );
  });

  it("sends changed variables with the webhook's defaults kept, whole worker lists, and removes copied labels that went", () => {
    const changed = capiSettings(
      {
        clusterClass: { namespace: "classes", name: "docker-kubeadm" },
        namespace: "clusters",
        variables: [{ name: "team", value: "red" }],
        metadata: { labels: { owner: "platform" } },
      },
      "capi",
    );
    const next = desiredTopologyCluster({ ...target, labels: {} }, changed, "1.36.3");
    expect(topologyChanges(stored, next)).toEqual({
      metadata: { labels: { "metadata.open-control-plane.io/tenant": null } },
      spec: {
        topology: {
          workers: { machineDeployments: [] },
          variables: [
            { name: "team", value: "red" },
            { name: "podSecurity", value: { enabled: true } },
          ],
        },
      },
    });
  });
});

/** A CAPI Cluster as Cluster API reports it, from `desired` at `version`. */
function reported(
  status: TopologyCluster["status"],
  extra: Partial<TopologyCluster["metadata"]> = {},
): TopologyCluster {
  const desired = desiredTopologyCluster(target, settings, "1.36.3");
  return {
    ...desired,
    metadata: { ...desired.metadata, ...extra },
    spec: { ...desired.spec, controlPlaneEndpoint: { host: "172.18.0.2", port: 6443 } },
    ...(status ? { status } : {}),
  };
}
const condition = (type: string, status: string, message = "") => ({
  type,
  status,
  reason: `${type}${status}`,
  message,
});
const phaseOf = (o: ClusterObservation) => (o.exists ? o.phase : "absent");
const now = Date.parse("2026-11-24T12:00:00Z");
const observe = (cluster: TopologyCluster) =>
  topologyObservation(cluster, { now, deletionTimeoutMs: 600_000 });

describe("topologyObservation", () => {
  const available = [
    condition("Available", "True"),
    condition("TopologyReconciled", "True"),
    condition("ControlPlaneAvailable", "True"),
  ];

  it("reports provisioning with Cluster API's first blocking message before the control plane is initialized", () => {
    const observation = observe(
      reported({
        phase: "Provisioning",
        conditions: [
          condition("Available", "False", "* ControlPlaneAvailable: Control plane not yet initialized"),
          condition("InfrastructureReady", "True"),
          condition("ControlPlaneAvailable", "False", "Control plane not yet initialized"),
        ],
      }),
    );
    expect(observation).toMatchObject({
      exists: true,
      phase: "provisioning",
      version: "1.36.3",
      endpoint: "https://172.18.0.2:6443",
      message: `CAPI Cluster clusters/${capiClusterName(target)}: Available: * ControlPlaneAvailable: Control plane not yet initialized`,
    });
    expect(observation.exists && observation.conditions?.map((c) => c.type)).toEqual([
      "CapiAvailable",
      "CapiInfrastructureReady",
      "CapiControlPlaneAvailable",
    ]);
  });

  it("reports ready once Available, rolled out to the topology's version and reconciled", () => {
    const observation = observe(
      reported({
        phase: "Provisioned",
        initialization: { controlPlaneInitialized: true },
        controlPlane: { versions: [{ version: "v1.36.3", replicas: 1 }] },
        conditions: available,
      }),
    );
    expect(phaseOf(observation)).toBe("ready");
    expect(observation.exists && observation.message).toBeUndefined();
  });

  it("reports updating, at the version still running, while the control plane rolls to a new one", () => {
    const rolling = reported({
      phase: "Provisioned",
      initialization: { controlPlaneInitialized: true },
      controlPlane: { versions: [{ version: "v1.36.3" }, { version: "v1.37.0" }] },
      conditions: available,
    });
    const observation = observe({
      ...rolling,
      spec: { ...rolling.spec, topology: { ...(rolling.spec.topology as Topology), version: "v1.37.0" } },
    });
    expect(observation).toMatchObject({ phase: "updating", version: "1.36.3" });
  });

  it("reports deleting with Cluster API's Deleting message, and says so once it takes longer than expected", () => {
    const deleting = reported(
      {
        phase: "Deleting",
        conditions: [condition("Deleting", "True", "* Control plane:\n  * Machine x deleting")],
      },
      { deletionTimestamp: new Date(now - 60_000).toISOString() },
    );
    expect(observe(deleting)).toMatchObject({
      phase: "deleting",
      message: `CAPI Cluster clusters/${capiClusterName(target)} is being deleted: * Control plane: * Machine x deleting`,
    });
    const stuck = {
      ...deleting,
      metadata: { ...deleting.metadata, deletionTimestamp: new Date(now - 1_200_000).toISOString() },
    };
    const overdue = observe(stuck);
    expect(overdue).toMatchObject({ phase: "deleting" });
    expect(overdue.exists && overdue.message).toContain(
      "is still being deleted after 20 min (more than the 10 min expected)",
    );
  });

  it("reports failed in Cluster API's Failed phase", () => {
    expect(phaseOf(observe(reported({ phase: "Failed", conditions: [] })))).toBe("failed");
  });
});

describe("hibernation on Cluster API (contract 1.6)", () => {
  const ready = [
    condition("Available", "True"),
    condition("TopologyReconciled", "True"),
    condition("ControlPlaneAvailable", "True"),
  ];
  const running = {
    observedGeneration: 1,
    initialization: { controlPlaneInitialized: true },
    controlPlane: { versions: [{ version: "v1.36.3", replicas: 1 }] },
    workers: { desiredReplicas: 1, replicas: 1, availableReplicas: 1 },
    conditions: ready,
  };
  const awake = reported(running, { generation: 1 });
  /** `cluster` after `patch` (annotations and the pools, as the backend writes them). */
  const applied = (cluster: TopologyCluster, patch: Record<string, unknown>, generation: number) => {
    const annotations = { ...cluster.metadata.annotations } as Record<string, string>;
    for (const [key, value] of Object.entries(
      (patch.metadata as { annotations: Record<string, string | null> }).annotations,
    ))
      if (value === null) delete annotations[key];
      else annotations[key] = value;
    const workers = (patch.spec as { topology: { workers: Topology["workers"] } }).topology.workers;
    const topology = { ...(cluster.spec.topology as Topology), workers };
    return {
      ...cluster,
      metadata: { ...cluster.metadata, annotations, generation },
      spec: { ...cluster.spec, topology },
    } as TopologyCluster;
  };

  it("scales every worker pool to zero recording the replicas, and wakes to exactly them", () => {
    const patch = hibernationPatch(awake);
    expect(patch).toEqual({
      metadata: {
        annotations: {
          [CAPI_HIBERNATED_REPLICAS_ANNOTATION]: '{"md-0":1}',
          [CAPI_WAKING_REPLICAS_ANNOTATION]: null,
        },
      },
      spec: {
        topology: {
          workers: { machineDeployments: [{ class: "default-worker", name: "md-0", replicas: 0 }] },
        },
      },
    });
    const asleep = applied(awake, patch as Record<string, unknown>, 2);
    expect(hibernationPatch(asleep)).toBeUndefined(); // idempotent
    expect(wakePatch(awake)).toBeUndefined(); // awake already
    const wake = wakePatch(asleep) as Record<string, unknown>;
    expect(wake).toEqual({
      metadata: {
        annotations: {
          [CAPI_HIBERNATED_REPLICAS_ANNOTATION]: null,
          [CAPI_WAKING_REPLICAS_ANNOTATION]: '{"md-0":1}',
        },
      },
      spec: {
        topology: {
          workers: { machineDeployments: [{ class: "default-worker", name: "md-0", replicas: 1 }] },
        },
      },
    });
    // Asleep, the engine's own update leaves the pools at zero.
    expect(topologyChanges(asleep, desiredTopologyCluster(target, settings, "1.36.3"))).toBeUndefined();
  });

  it("is hibernating while worker Machines exist, hibernated at none (the control plane runs on), waking until the workers are back", () => {
    const asleepSpec = applied(awake, hibernationPatch(awake) as Record<string, unknown>, 2);
    const at = (status: Partial<typeof running>) => {
      const cluster = { ...asleepSpec, status: { ...running, ...status } };
      return hibernationObservation(cluster, observe(cluster));
    };
    expect(at({})).toMatchObject({ phase: "hibernating" }); // Cluster API has not seen the patch
    expect(at({ observedGeneration: 2 })).toMatchObject({ phase: "hibernating" });
    const hibernated = at({
      observedGeneration: 2,
      workers: { desiredReplicas: 0, replicas: 0, availableReplicas: 0 },
    });
    expect(hibernated).toMatchObject({ phase: "hibernated", endpoint: "https://172.18.0.2:6443" });
    expect(hibernated.exists && hibernated.message).toContain("the control plane keeps running");

    const woken = applied(asleepSpec, wakePatch(asleepSpec) as Record<string, unknown>, 3);
    const waking = (status: Partial<typeof running>) => {
      const cluster = { ...woken, status: { ...running, ...status } };
      return hibernationObservation(cluster, observe(cluster));
    };
    const none = { desiredReplicas: 0, replicas: 0, availableReplicas: 0 };
    expect(waking({ observedGeneration: 2, workers: none })).toMatchObject({ phase: "waking" });
    expect(waking({ observedGeneration: 3, workers: { ...none, replicas: 1 } })).toMatchObject({
      phase: "waking",
      message: expect.stringContaining("0/1 available"),
    });
    expect(waking({ observedGeneration: 3 })).toMatchObject({
      phase: "ready",
      endpoint: "https://172.18.0.2:6443",
    });
    // The wake's marker goes with the next write of the Cluster.
    const desired = desiredTopologyCluster(target, settings, "1.36.3");
    const topology = desired.spec.topology as Topology;
    const bigger = {
      ...desired,
      spec: {
        ...desired.spec,
        topology: {
          ...topology,
          workers: { machineDeployments: [{ class: "default-worker", name: "md-0", replicas: 2 }] },
        },
      },
    };
    expect(topologyChanges(woken, bigger)?.metadata).toMatchObject({
      annotations: { [CAPI_WAKING_REPLICAS_ANNOTATION]: null },
    });
  });

  it("on Docker machines, pauses the Cluster recording its machines' addresses, is hibernated only once they are all stopped, and unpauses on wake", () => {
    const onDocker = (cluster: TopologyCluster, paused?: boolean) =>
      ({
        ...cluster,
        spec: {
          ...cluster.spec,
          infrastructureRef: { kind: "DockerCluster", name: "x" },
          ...(paused === undefined ? {} : { paused }),
        },
      }) as TopologyCluster;
    const workersGone = {
      ...applied(awake, hibernationPatch(awake) as Record<string, unknown>, 2),
      status: { ...running, observedGeneration: 2, workers: { replicas: 0, availableReplicas: 0 } },
    };
    const base = hibernationObservation(onDocker(workersGone), observe(onDocker(workersGone)));
    expect(base).toMatchObject({ phase: "hibernated" });
    const machine = (name: string, up: boolean): DockerMachine => ({
      name,
      role: name.endsWith("lb") ? "external-load-balancer" : "control-plane",
      running: up,
      addresses: up ? { kind: { ipv4: `172.18.0.${name.length}` } } : {},
    });
    const both = [machine("c-lb", true), machine("c-cp-x", true)];
    // Not yet paused: a sleep half done, the engine to order the next step.
    const halfway = machinesAsleepObservation(onDocker(workersGone), base, { can: true, machines: both });
    expect(halfway).toMatchObject({ phase: "hibernating", outOfDate: true });
    const pause = pausePatch(onDocker(workersGone), both) as {
      metadata: { annotations: Record<string, string> };
      spec: { paused: boolean };
    };
    expect(pause.spec.paused).toBe(true);
    const record = JSON.parse(pause.metadata.annotations[CAPI_SLEEPING_MACHINES_ANNOTATION] as string);
    expect(record).toEqual({
      "c-lb": { kind: { ipv4: "172.18.0.4" } },
      "c-cp-x": { kind: { ipv4: "172.18.0.6" } },
    });
    const paused = onDocker(
      {
        ...workersGone,
        metadata: {
          ...workersGone.metadata,
          annotations: { ...workersGone.metadata.annotations, ...pause.metadata.annotations },
        },
      },
      true,
    );
    expect(pausePatch(paused, both)).toBeUndefined(); // idempotent
    // One machine stopped (a kill between the two): still half done; the stopped one's address is kept.
    const oneStopped = [machine("c-lb", false), machine("c-cp-x", true)];
    expect(machinesAsleepObservation(paused, base, { can: true, machines: oneStopped })).toMatchObject({
      phase: "hibernating",
      outOfDate: true,
      message: expect.stringContaining("still running: c-cp-x"),
    });
    expect(pausePatch(paused, oneStopped)).toBeUndefined();
    const asleep = machinesAsleepObservation(paused, base, {
      can: true,
      machines: [machine("c-lb", false), machine("c-cp-x", false)],
    });
    expect(asleep).toMatchObject({ phase: "hibernated", message: expect.stringContaining("c-lb, c-cp-x") });
    expect(asleep.exists && asleep.outOfDate).toBeFalsy();
    // Paused, Cluster API's status lags: the workers count as gone (the backend pauses only after they are).
    const lagging = { ...paused, metadata: { ...paused.metadata, generation: 9 } };
    expect(hibernationObservation(lagging, observe(lagging))).toMatchObject({ phase: "hibernated" });
    // Machines the backend cannot stop: hibernated, the control plane running, and why.
    const elsewhere = machinesAsleepObservation(workersGone, base, { can: false, why: "no Docker CLI" });
    expect(elsewhere).toMatchObject({ phase: "hibernated" });
    expect(elsewhere.exists && elsewhere.message).toContain("the control plane keeps running");
    expect(elsewhere.exists && elsewhere.message).toContain("not stopped: no Docker CLI");
    // Woken: unpaused, the record removed, the workers back.
    expect(wakePatch(paused)).toMatchObject({
      metadata: { annotations: { [CAPI_SLEEPING_MACHINES_ANNOTATION]: null } },
      spec: { paused: null, topology: { workers: { machineDeployments: [{ replicas: 1 }] } } },
    });
  });
});

describe("what a ClusterClass offers", () => {
  const clusterClass: ClusterClass = {
    metadata: { name: "docker-kubeadm", namespace: "classes" },
    spec: {
      infrastructure: { templateRef: { kind: "DockerClusterTemplate" } },
      workers: { machineDeployments: [{ class: "default-worker" }] },
      variables: [
        { name: "team", schema: { openAPIV3Schema: { default: "none" } }, required: true },
        { name: "region", required: true },
      ],
    },
  };

  it("has the infrastructure as a trait, and workerless when no worker machines are asked for or possible", () => {
    expect(classTraits(clusterClass, settings)).toEqual(["provider-docker"]);
    expect(classTraits(clusterClass, { ...settings, workers: [] })).toEqual([
      "workerless",
      "provider-docker",
    ]);
    const noWorkers = { ...clusterClass, spec: { ...clusterClass.spec, workers: {} } };
    expect(classTraits(noWorkers, settings)).toContain("workerless");
  });

  it("names what a config asks that the class cannot do", () => {
    expect(classProblem(clusterClass, settings)).toBe(
      "ClusterClass classes/docker-kubeadm requires variable region; set it in settings.variables",
    );
    expect(
      classProblem(clusterClass, { ...settings, workers: [{ class: "big", name: "md-0", replicas: 1 }] }),
    ).toBe(
      "ClusterClass classes/docker-kubeadm has no worker class big (settings.workers of pool md-0; it has: default-worker)",
    );
    expect(classProblem(clusterClass, { ...settings, variables: [{ name: "zone", value: "a" }] })).toContain(
      "defines no variable zone",
    );
    expect(
      classProblem(clusterClass, {
        ...settings,
        variables: [...settings.variables, { name: "region", value: "eu" }],
      }),
    ).toBeUndefined();
  });

  it("offers the listed versions the class can build, newest first; the class's list when the config lists none", () => {
    const listed = [{ version: "1.35.0" }, { version: "1.36.3" }, { version: "1.34.1", deprecated: true }];
    expect(offeredVersions(listed, clusterClass)).toEqual([
      { version: "1.36.3" },
      { version: "1.35.0" },
      { version: "1.34.1", deprecated: true },
    ]);
    const versioned = {
      ...clusterClass,
      spec: { ...clusterClass.spec, kubernetesVersions: ["v1.35.0", "v1.36.3"] },
    };
    expect(offeredVersions(listed, versioned)).toEqual([{ version: "1.36.3" }, { version: "1.35.0" }]);
    expect(offeredVersions([], versioned)).toEqual([{ version: "1.36.3" }, { version: "1.35.0" }]);
    expect(offeredVersions([], clusterClass)).toEqual([]);
  });
});
