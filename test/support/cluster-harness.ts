/** A real API server with the CRDs, a namespace and a ClusterProfile of ours: for tests that watch Clusters live. */

import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { aCluster, aClusterProfile } from "./builders.ts";
import { eventually, satisfying } from "./eventually.ts";
import { readCustomObject } from "./maybe-absent.ts";

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
  /** Waits until `predicate` holds for the Cluster (or its absence); fails with the last object seen. */
  waitFor(
    name: string,
    predicate: (cluster: Cluster | undefined) => boolean,
    timeoutMs?: number,
  ): Promise<Cluster | undefined>;
  stop(): Promise<void>;
}

/** How to start the harness. */
export interface ClusterHarnessOptions {
  /** More kube-apiserver flags, e.g. `--min-request-timeout=1` to end watches early. */
  readonly extraApiServerArgs?: readonly string[];
}

/** A real API server with our CRDs and one namespace, and a client of its custom objects. */
export interface ApiServerWithNamespace {
  readonly controlPlane: ControlPlane;
  readonly custom: CustomObjectsApi;
}

/** Starts the control plane with our CRDs and creates `namespace`: where every test on the API server begins. */
export async function startApiServerWith(
  namespace: string,
  options: ClusterHarnessOptions = {},
): Promise<ApiServerWithNamespace> {
  const controlPlane = await startControlPlane({
    prepare: installingCrds("crds"),
    ...(options.extraApiServerArgs ? { extraApiServerArgs: [...options.extraApiServerArgs] } : {}),
  });
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  return { controlPlane, custom };
}

/** Starts the control plane and creates namespace `clusters` and profile `test.<provider>.small`. */
export async function startClusterHarness(
  provider = "engine-test",
  options: ClusterHarnessOptions = {},
): Promise<ClusterHarness> {
  const namespace = "clusters";
  const { controlPlane, custom } = await startApiServerWith(namespace, options);
  const ours = aClusterProfile({ provider, versions: [{ version: "1.33.3" }, { version: "1.32.7" }] });
  const profile = ours.metadata.name ?? "";
  await custom.createClusterCustomObject({ ...RESOURCES.ClusterProfile, body: ours });
  const readCluster = (name: string) => readCustomObject<Cluster>(custom, RESOURCES.Cluster, namespace, name);
  return {
    controlPlane,
    custom,
    provider,
    namespace,
    profile,
    createCluster: async (name, spec = {}, metadata = {}) => {
      const cluster = aCluster({ name, namespace, profile, tenancy: "Exclusive" });
      const body = {
        ...cluster,
        metadata: { ...metadata, ...cluster.metadata },
        spec: { ...cluster.spec, ...spec },
      };
      return (await custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace,
        body,
      })) as Cluster;
    },
    readCluster,
    waitFor: (name, predicate, timeoutMs) =>
      eventually(async () => satisfying(await readCluster(name), predicate), {
        what: `Cluster ${namespace}/${name}: ${predicate.name || String(predicate)}`,
        ...(timeoutMs ? { timeoutMs } : {}),
      }),
    stop: () => controlPlane.stop(),
  };
}

/** A Cluster whose status says Ready. */
export const isReady = (cluster: Cluster | undefined): boolean => cluster?.status?.phase === "Ready";
