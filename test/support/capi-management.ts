/**
 * A Cluster API management cluster for the `capi` backend's tests: a real API server with the engine's CRDs, Cluster
 * API's core manager (ClusterTopology on), kubeadm control-plane and bootstrap managers and the Docker provider, the
 * load-balancer image CAPD runs (built offline), and the test ClusterClasses in namespace `classes`.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Condition } from "../../src/api/common.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { type CapiStack, startCapiStack } from "../../src/dev/capi-providers.ts";
import type { TopologyCluster } from "../../src/providers/capi-topology.ts";
import { installCrds, installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { applyCapiObjects, type CapiObject, CLASS_NAMESPACE } from "./capi-classes.ts";
import { containersNamed, containerToolchain, docker } from "./containers.ts";

/** Where the test ClusterClasses live. */
export { CLASS_NAMESPACE };

/** What a test gets. */
export interface CapiManagement {
  readonly controlPlane: ControlPlane;
  readonly stack: CapiStack;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** CAPI Clusters in `namespace` (every one, whoever made it). */
  capiClusters(namespace: string): Promise<TopologyCluster[]>;
  /**
   * What Cluster API says of the machines of `namespace`, for a failure message: each Machine, DockerMachine and
   * KubeadmControlPlane with its phase and every condition not True, then the managers' last log lines.
   */
  machinesReport(namespace: string): Promise<string>;
  /** Stops the managers and the API server. */
  stop(): Promise<void>;
}

/** The kinds {@link CapiManagement.machinesReport} shows. */
const REPORTED = [
  { group: "cluster.x-k8s.io", plural: "machines" },
  { group: "infrastructure.cluster.x-k8s.io", plural: "dockermachines" },
  { group: "controlplane.cluster.x-k8s.io", plural: "kubeadmcontrolplanes" },
] as const;

interface Reported {
  readonly kind?: string;
  readonly metadata: { readonly name: string };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly Condition[];
  };
}

/** One object's line: kind/name, phase, and every condition that is not True, with its reason and message. */
function reportLine(object: Reported): string {
  const notTrue = (object.status?.conditions ?? [])
    .filter((c) => c.status !== "True")
    .map((c) => `${c.type}=${c.status} ${c.reason}${c.message ? `: ${c.message.replace(/\s+/g, " ")}` : ""}`);
  return `${object.kind}/${object.metadata.name} phase=${object.status?.phase ?? "-"}; ${notTrue.join("; ") || "all True"}`;
}

const HAPROXY_IMAGE_SCRIPT = join(import.meta.dirname, "..", "..", "hack", "capi", "haproxy-image.sh");

/**
 * Starts it all. `classes` are applied in {@link CLASS_NAMESPACE}; `namespaces` are created for the CAPI Clusters.
 * With Docker machines in mind (`docker: true`) the container toolchain and CAPD's load-balancer image are ensured
 * first (seconds when cached).
 */
export async function startCapiManagement(props: {
  readonly classes: readonly CapiObject[];
  readonly namespaces: readonly string[];
  readonly docker?: boolean;
}): Promise<CapiManagement> {
  if (props.docker) {
    const tools = containerToolchain();
    execFileSync(HAPROXY_IMAGE_SCRIPT, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, DOCKER: tools.docker },
      timeout: 900_000,
    });
  }
  const controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  let stack: CapiStack;
  try {
    stack = await startCapiStack({ kubeConfig: controlPlane.kubeConfig, installCrds });
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of new Set([CLASS_NAMESPACE, ...props.namespaces]))
    await core.createNamespace({ body: { metadata: { name } } });
  await applyCapiObjects(controlPlane.kubeConfig, CLASS_NAMESPACE, props.classes);
  return {
    controlPlane,
    stack,
    custom,
    core,
    capiClusters: async (namespace) =>
      (
        (await custom.listNamespacedCustomObject({
          group: "cluster.x-k8s.io",
          version: "v1beta2",
          plural: "clusters",
          namespace,
        })) as { items: TopologyCluster[] }
      ).items,
    machinesReport: async (namespace) => {
      const lines: string[] = [];
      for (const { group, plural } of REPORTED) {
        try {
          const list = (await custom.listNamespacedCustomObject({
            group,
            version: "v1beta2",
            plural,
            namespace,
          })) as {
            items: Reported[];
          };
          lines.push(...list.items.map(reportLine));
        } catch (error) {
          lines.push(`${plural}: cannot list (${(error as Error).message})`);
        }
      }
      return `${lines.join("\n")}\n${stack.logTails(15)}`;
    },
    stop: async () => {
      await stack.stop();
      await controlPlane.stop();
    },
  };
}

/** Removes the containers (machines, load balancers) whose names start with `prefix`: what a failed run left. */
export async function removeContainers(prefix: string): Promise<string[]> {
  const names = await containersNamed(prefix);
  if (names.length > 0) await docker("rm", "-f", "-v", ...names);
  return names;
}
