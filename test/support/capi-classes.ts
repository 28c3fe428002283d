/**
 * ClusterClasses for the `capi` backend's tests, with the templates they name: `docker-kubeadm` (real machines as
 * containers from the offline kind node image, Cluster API's kubeadm control plane, one worker class) and
 * `in-memory-kubeadm` (the same control plane on CAPD's in-memory machines: Cluster API's own simulation, with a
 * simulated API server per cluster, for the property-style conformance kit).
 */
import { join } from "node:path";
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { isConflict } from "../../src/api/error-message.ts";

/** A Cluster API object of a class: group/version, plural and the body. */
export interface CapiObject {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly body: {
    readonly kind: string;
    readonly metadata: { readonly name: string };
    readonly spec: object;
  };
}

const V1BETA2 = "v1beta2";
const object = (group: string, plural: string, kind: string, name: string, spec: object): CapiObject => ({
  group,
  version: V1BETA2,
  plural,
  body: { kind, metadata: { name }, spec },
});
const infrastructure = "infrastructure.cluster.x-k8s.io";
const controlPlane = "controlplane.cluster.x-k8s.io";
const bootstrap = "bootstrap.cluster.x-k8s.io";
const core = "cluster.x-k8s.io";
const ref = (group: string, kind: string, name: string) => ({
  apiVersion: `${group}/${V1BETA2}`,
  kind,
  name,
});

/** kubelet flags of kind's own clusters: never evict for disk pressure on a shared test machine. */
const KUBELET_EXTRA_ARGS = [
  { name: "eviction-hard", value: "nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%" },
];

/**
 * The variable both classes define and patch: a label every node of the cluster gets (`openmcp.test/team=<value>`),
 * so a test sees a ProviderConfig's topology variable arrive on the machines.
 */
/** Where the classes are applied (see capi-management.ts). */
export const CLASS_NAMESPACE = "classes";

export const TEAM_VARIABLE = "team";
const teamVariable = {
  name: TEAM_VARIABLE,
  required: false,
  schema: { openAPIV3Schema: { type: "string", default: "none", pattern: "^[a-z0-9-]*$" } },
};
const teamPatch = (
  name: string,
  group: string,
  templateKind: string,
  configPath: string,
  selector: object,
) => ({
  name,
  definitions: [
    {
      selector: { apiVersion: `${group}/${V1BETA2}`, kind: templateKind, matchResources: selector },
      jsonPatches: [
        {
          op: "add",
          path: `${configPath}/nodeRegistration/kubeletExtraArgs/-`,
          valueFrom: { template: "name: node-labels\nvalue: openmcp.test/team={{ .team }}" },
        },
      ],
    },
  ],
});

/**
 * What every Docker machine mounts: a crictl stand-in (the offline node image has none, and CAPD runs `crictl ps`
 * before kubeadm; see hack/capi/crictl-shim.sh).
 */
const CRICTL_SHIM = join(import.meta.dirname, "..", "..", "hack", "capi", "crictl-shim.sh");
const dockerMachine = {
  template: {
    spec: {
      extraMounts: [{ containerPath: "/usr/local/bin/crictl", hostPath: CRICTL_SHIM, readOnly: true }],
      // CAPD runs a machine's bootstrap (kubeadm init or join) once, with no retry after a failure or after this
      // timeout (5 minutes by default): on a loaded shared machine a slow init would leave the machine dead for good.
      bootstrapTimeout: "20m",
    },
  },
};

/**
 * How a KubeadmControlPlane replaces machines (a new version): one new machine first. What Cluster API's defaulting
 * webhook would set; the tests run it without webhooks, and KubeadmControlPlane does not roll out without it.
 */
const KCP_ROLLOUT = { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } };

/** Node registration for kubeadm on a kind node image (the machine's kubelet reads kind's /etc/default/kubelet). */
const nodeRegistration = { kubeletExtraArgs: KUBELET_EXTRA_ARGS };

/**
 * kubeadm's waits, longer than its defaults (4 minutes for the control plane's health, 1 minute per API call): a
 * node booting beside others on two cores has run out of them ("client rate limiter Wait returned an error"), and a
 * Docker machine's kubeadm is not run again (see `bootstrapTimeout`).
 */
const KUBEADM_TIMEOUTS = {
  controlPlaneComponentHealthCheckSeconds: 900,
  kubeletHealthCheckSeconds: 600,
  kubernetesAPICallSeconds: 300,
  etcdAPICallSeconds: 300,
  tlsBootstrapSeconds: 900,
  discoverySeconds: 900,
};

/** `docker-kubeadm`: DockerCluster (CAPD's haproxy in front), KubeadmControlPlane on Docker machines, worker class `default-worker`. */
export function dockerKubeadmClass(
  options: { readonly name?: string; readonly kubernetesVersions?: readonly string[] } = {},
): CapiObject[] {
  const name = options.name ?? "docker-kubeadm";
  const kcpSpec = {
    template: {
      spec: {
        rollout: KCP_ROLLOUT,
        kubeadmConfigSpec: {
          clusterConfiguration: { apiServer: { certSANs: ["localhost", "127.0.0.1"] } },
          initConfiguration: { nodeRegistration, timeouts: KUBEADM_TIMEOUTS },
          joinConfiguration: { nodeRegistration, timeouts: KUBEADM_TIMEOUTS },
        },
      },
    },
  };
  return [
    // Port 6443 is what CAPD's defaulting webhook would set (the tests run Cluster API without webhooks).
    object(infrastructure, "dockerclustertemplates", "DockerClusterTemplate", `${name}-cluster`, {
      template: { spec: { controlPlaneEndpoint: { port: 6443 } } },
    }),
    object(
      controlPlane,
      "kubeadmcontrolplanetemplates",
      "KubeadmControlPlaneTemplate",
      `${name}-control-plane`,
      kcpSpec,
    ),
    object(
      infrastructure,
      "dockermachinetemplates",
      "DockerMachineTemplate",
      `${name}-control-plane`,
      dockerMachine,
    ),
    object(
      infrastructure,
      "dockermachinetemplates",
      "DockerMachineTemplate",
      `${name}-worker`,
      dockerMachine,
    ),
    object(bootstrap, "kubeadmconfigtemplates", "KubeadmConfigTemplate", `${name}-worker`, {
      template: { spec: { joinConfiguration: { nodeRegistration, timeouts: KUBEADM_TIMEOUTS } } },
    }),
    object(core, "clusterclasses", "ClusterClass", name, {
      ...(options.kubernetesVersions ? { kubernetesVersions: options.kubernetesVersions } : {}),
      controlPlane: {
        templateRef: ref(controlPlane, "KubeadmControlPlaneTemplate", `${name}-control-plane`),
        machineInfrastructure: {
          templateRef: ref(infrastructure, "DockerMachineTemplate", `${name}-control-plane`),
        },
      },
      infrastructure: { templateRef: ref(infrastructure, "DockerClusterTemplate", `${name}-cluster`) },
      workers: {
        machineDeployments: [
          {
            class: "default-worker",
            // What Cluster API's MachineDeployment defaulting webhook would set (the tests run it without webhooks).
            rollout: {
              strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
            },
            bootstrap: { templateRef: ref(bootstrap, "KubeadmConfigTemplate", `${name}-worker`) },
            infrastructure: { templateRef: ref(infrastructure, "DockerMachineTemplate", `${name}-worker`) },
          },
        ],
      },
      variables: [teamVariable],
      patches: [
        teamPatch(
          "team-node-label",
          controlPlane,
          "KubeadmControlPlaneTemplate",
          "/spec/template/spec/kubeadmConfigSpec/initConfiguration",
          { controlPlane: true },
        ),
        teamPatch(
          "team-node-label-workers",
          bootstrap,
          "KubeadmConfigTemplate",
          "/spec/template/spec/joinConfiguration",
          { machineDeploymentClass: { names: ["default-worker"] } },
        ),
      ],
    }),
  ];
}

/**
 * A ProviderConfig's settings on the `docker-kubeadm` class: one control-plane machine and one worker, their CAPI
 * Clusters in `namespace`, kind's Pod subnet (the node image's static CNI config hands out addresses from it).
 */
export function dockerKubeadmSettings(namespace: string) {
  return {
    clusterClass: { namespace: CLASS_NAMESPACE, name: "docker-kubeadm" },
    namespace,
    controlPlane: { replicas: 1 },
    workers: [{ class: "default-worker", name: "md-0", replicas: 1 }],
    variables: [{ name: TEAM_VARIABLE, value: "blue" }],
    clusterNetwork: { pods: { cidrBlocks: ["10.244.0.0/16"] }, services: { cidrBlocks: ["10.96.0.0/12"] } },
    deletionTimeoutSeconds: 600,
  };
}

/** How long CAPD's in-memory machines take to "boot" and to run their node, etcd and API server (short, for a fast kit). */
const inMemoryProvisioning = (vm: string) => ({
  vm: { provisioning: { startupDuration: vm, startupJitter: "0.2" } },
  node: { provisioning: { startupDuration: "1s", startupJitter: "0.2" } },
  apiServer: { provisioning: { startupDuration: "1s", startupJitter: "0.2" } },
  etcd: { provisioning: { startupDuration: "1s", startupJitter: "0.2" } },
});

/**
 * `in-memory-kubeadm`: the kubeadm control plane on CAPD's in-memory DevMachines (no containers; CAPD simulates the
 * machines and serves a fake API server per cluster on `POD_IP`); workerless (no worker classes).
 */
export function inMemoryKubeadmClass(name = "in-memory-kubeadm"): CapiObject[] {
  const registration = {
    criSocket: "unix:///var/run/containerd/containerd.sock",
    kubeletExtraArgs: KUBELET_EXTRA_ARGS,
  };
  return [
    object(infrastructure, "devclustertemplates", "DevClusterTemplate", `${name}-cluster`, {
      template: { spec: { backend: { inMemory: {} } } },
    }),
    object(
      controlPlane,
      "kubeadmcontrolplanetemplates",
      "KubeadmControlPlaneTemplate",
      `${name}-control-plane`,
      {
        template: {
          spec: {
            rollout: KCP_ROLLOUT,
            kubeadmConfigSpec: {
              clusterConfiguration: { apiServer: { certSANs: ["localhost", "127.0.0.1"] } },
              initConfiguration: { nodeRegistration: registration },
              joinConfiguration: { nodeRegistration: registration },
            },
          },
        },
      },
    ),
    object(infrastructure, "devmachinetemplates", "DevMachineTemplate", `${name}-control-plane`, {
      template: { spec: { backend: { inMemory: inMemoryProvisioning("2s") } } },
    }),
    object(core, "clusterclasses", "ClusterClass", name, {
      controlPlane: {
        templateRef: ref(controlPlane, "KubeadmControlPlaneTemplate", `${name}-control-plane`),
        machineInfrastructure: {
          templateRef: ref(infrastructure, "DevMachineTemplate", `${name}-control-plane`),
        },
      },
      infrastructure: { templateRef: ref(infrastructure, "DevClusterTemplate", `${name}-cluster`) },
      variables: [teamVariable],
    }),
  ];
}

/** Creates the objects in `namespace` (an object that exists already is left as it is). */
export async function applyCapiObjects(
  kubeConfig: KubeConfig,
  namespace: string,
  objects: readonly CapiObject[],
): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  for (const { group, version, plural, body } of objects) {
    try {
      await custom.createNamespacedCustomObject({
        group,
        version,
        plural,
        namespace,
        body: { apiVersion: `${group}/${version}`, ...body },
      });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
}
