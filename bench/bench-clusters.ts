/** What the Cluster benchmarks share: bounded parallelism, and the baseline's minimal writes per Cluster. */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { CLUSTER_FINALIZERS } from "../src/api/constants/cluster.ts";
import { CLUSTERS_API_VERSION, RESOURCES } from "../src/api/constants.ts";

/** Runs `task(i)` for i in [0, n) with at most `limit` in flight. */
export async function pool(n: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

/** A Cluster of `profile`, as the benchmarks create them. */
export const clusterBody = (name: string, profile: string) => ({
  apiVersion: CLUSTERS_API_VERSION,
  kind: "Cluster",
  metadata: { name },
  spec: { profile, tenancy: "Exclusive" },
});

/**
 * The baseline: the least a provider must write to take one Cluster to Ready — create it (the user's
 * write), add the finalizer, set the status — with nothing watched and nothing computed.
 */
export async function minimalClusterWrites(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  profile: string,
): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace,
    body: clusterBody(name, profile),
  });
  const target = { ...RESOURCES.Cluster, namespace, name };
  await custom.patchNamespacedCustomObject({
    ...target,
    body: [{ op: "add", path: "/metadata/finalizers", value: [CLUSTER_FINALIZERS.cluster] }],
  });
  await custom.patchNamespacedCustomObjectStatus({
    ...target,
    body: [{ op: "add", path: "/status", value: { observedGeneration: 1, phase: "Ready", conditions: [] } }],
  });
}

/** The benchmarks' world: `namespaces`, and the ProviderConfig `sim` on the simulated backend. */
export async function benchWorld(
  kubeConfig: KubeConfig,
  namespaces: readonly string[],
): Promise<CustomObjectsApi> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of namespaces) await core.createNamespace({ body: { metadata: { name } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: {
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "sim" },
      spec: { backend: "simulated" },
    },
  });
  return custom;
}
