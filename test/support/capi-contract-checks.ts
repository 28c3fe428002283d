/**
 * What the Cluster API contract has a provider publish, checked the same way for an EngineCluster and an
 * EngineControlPlane: the kubeconfig Secret, the ClusterEndpoint, and nothing left once the Cluster is deleted.
 */
import { CoreV1Api, KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { expect } from "vitest";
import { CAPI_CLUSTER_RESOURCE } from "../../src/api/cluster-api.ts";
import type { Built, CapiProviderWorld } from "./capi-provider-world.ts";
import { eventually } from "./eventually.ts";
import type { CustomResource } from "./maybe-absent.ts";

/** The workload's API server as the provider publishes it (`spec.controlPlaneEndpoint`). */
type Endpoint = { readonly host: string; readonly port: number } | undefined;

/** Who owns a published object. */
interface Owner {
  readonly kind: string;
  readonly name: string;
  readonly uid: string | undefined;
}

/**
 * The kubeconfig Secret of Cluster `cluster` is CAPI's type, labelled with the cluster name, and the workload at
 * `endpoint` answers through it; resolves to the Secret.
 */
export async function expectWorkloadKubeconfig(
  world: CapiProviderWorld,
  cluster: string,
  endpoint: Endpoint,
): Promise<V1Secret | undefined> {
  const secret = await world.readSecret(`${cluster}-kubeconfig`);
  expect(secret?.type).toBe("cluster.x-k8s.io/secret");
  expect(secret?.metadata?.labels?.["cluster.x-k8s.io/cluster-name"]).toBe(cluster);
  const workload = new KubeConfig();
  workload.loadFromString(Buffer.from(secret?.data?.value ?? "", "base64").toString("utf8"));
  expect(workload.getCurrentCluster()?.server).toBe(`https://${endpoint?.host}:${endpoint?.port}`);
  const namespaces = await workload.makeApiClient(CoreV1Api).listNamespace();
  expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");
  return secret;
}

/** The ClusterEndpoint of Cluster `cluster` names the workload's API server at `endpoint`, owned by `owner`. */
export async function expectClusterEndpoint(
  world: CapiProviderWorld,
  cluster: string,
  endpoint: Endpoint,
  owner: Owner,
): Promise<void> {
  const published = await world.readClusterEndpoint(cluster);
  expect(published?.spec).toEqual({ cluster, host: endpoint?.host, port: endpoint?.port, type: "apiserver" });
  expect(published?.metadata.ownerReferences).toContainEqual(expect.objectContaining(owner));
}

/**
 * Deletes CAPI's Cluster `name` and waits until it is gone; then `built` (of `resource`, the Cluster's provider
 * object) is gone, with its kubeconfig Secret and ClusterEndpoint, deleted at the local backend.
 */
export async function expectDeletedThroughCluster(
  world: CapiProviderWorld,
  name: string,
  resource: CustomResource,
  built: Built | undefined,
): Promise<void> {
  await world.remove(CAPI_CLUSTER_RESOURCE, name);
  await eventually(async () => expect(await world.read(CAPI_CLUSTER_RESOURCE, name)).toBeUndefined(), {
    what: `Cluster ${name} gone`,
    timeoutMs: 120_000,
  });
  expect(await world.read(resource, name)).toBeUndefined();
  expect(await world.readSecret(`${name}-kubeconfig`)).toBeUndefined();
  expect(await world.readClusterEndpoint(name)).toBeUndefined();
  expect(world.callsOf(built?.metadata.uid)).toContain("delete");
  expect(await world.local.observe(world.targetOf(built, "local"))).toEqual({ exists: false });
}
