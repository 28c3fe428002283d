/** A real API server with the CRDs, a namespace and a ClusterProfile of ours: for tests that watch Clusters live. */
import { setTimeout as sleep } from "node:timers/promises";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTERS_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";

/** What a test gets: the control plane and helpers around its Clusters. */
export interface ClusterHarness {
  readonly controlPlane: ControlPlane;
  readonly custom: CustomObjectsApi;
  readonly provider: string;
  readonly namespace: string;
  /** The profile of ours: offers 1.33.3 and 1.32.7. */
  readonly profile: string;
  createCluster(
    name: string,
    spec?: Partial<Cluster["spec"]>,
    metadata?: Partial<Cluster["metadata"]>,
  ): Promise<Cluster>;
  readCluster(name: string): Promise<Cluster | undefined>;
  /** Polls until `predicate` holds; fails with the last object seen. */
  waitFor(
    name: string,
    predicate: (cluster: Cluster | undefined) => boolean,
    timeoutMs?: number,
  ): Promise<Cluster | undefined>;
  stop(): Promise<void>;
}

/** Starts the control plane and creates namespace `clusters` and profile `test.<provider>.small`. */
export async function startClusterHarness(provider = "engine-test"): Promise<ClusterHarness> {
  const namespace = "clusters";
  const profile = `test.${provider}.small`;
  const controlPlane = await startControlPlane({ crdDirectory: "crds" });
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ClusterProfile,
    body: {
      apiVersion: CLUSTERS_API_VERSION,
      kind: "ClusterProfile",
      metadata: { name: profile },
      spec: {
        providerRef: { name: provider },
        providerConfigRef: { name: "small" },
        supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7" }],
      },
    },
  });
  const readCluster = async (name: string) => {
    try {
      return (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name })) as Cluster;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  };
  return {
    controlPlane,
    custom,
    provider,
    namespace,
    profile,
    createCluster: async (name, spec = {}, metadata = {}) =>
      (await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace,
        body: {
          apiVersion: CLUSTERS_API_VERSION,
          kind: "Cluster",
          metadata: { ...metadata, name },
          spec: { profile, tenancy: "Exclusive", ...spec },
        },
      })) as Cluster,
    readCluster,
    waitFor: async (name, predicate, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const last = await readCluster(name);
        if (predicate(last)) return last;
        if (Date.now() > deadline)
          throw new Error(`condition not met for ${name}; last seen:\n${JSON.stringify(last, null, 2)}`);
        await sleep(50);
      }
    },
    stop: () => controlPlane.stop(),
  };
}

/** A Cluster whose status says Ready. */
export const isReady = (cluster: Cluster | undefined): boolean => cluster?.status?.phase === "Ready";
