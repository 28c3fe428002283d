/** The few API calls `landscape up` and `down` make on the bootstrap and the platform cluster. */
import {
  AppsV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { ClusterRequest } from "../../api/cluster-request.ts";
import { CLUSTER_ANNOTATIONS } from "../../api/constants/cluster.ts";
import { RESOURCES } from "../../api/constants.ts";
import { absentIfNotFound, isConflict } from "../../api/error-message.ts";
import { serverSideApply } from "../../runtime/api-server/server-side-apply.ts";
import type { Manifest } from "./landscape-plan.ts";

const FIELD_MANAGER = "openmcp-engine-landscape";

/** One cluster's API, as the landscape commands use it. */
export class LandscapeApi {
  readonly #objects: KubernetesObjectApi;
  readonly #custom: CustomObjectsApi;
  readonly #apps: AppsV1Api;
  constructor(kubeConfig: KubeConfig) {
    this.#objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#apps = kubeConfig.makeApiClient(AppsV1Api);
  }

  /** Creates each object that does not exist yet; leaves existing ones as they are (a resumed run). */
  async createMissing(objects: readonly Manifest[]): Promise<void> {
    for (const object of objects) {
      try {
        await this.#objects.create(object as KubernetesObject);
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  /** Server-side applies each object, taking over its fields (the engine's own manifests). */
  async apply(objects: readonly Manifest[]): Promise<void> {
    for (const object of objects)
      await serverSideApply(this.#objects, object as KubernetesObject, FIELD_MANAGER);
  }

  cluster(name: string, namespace: string): Promise<Cluster | undefined> {
    return absentIfNotFound(
      () =>
        this.#custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name }) as Promise<Cluster>,
    );
  }

  async clusters(): Promise<Cluster[]> {
    const list = (await this.#custom.listClusterCustomObject({ ...RESOURCES.Cluster })) as {
      items: Cluster[];
    };
    return list.items;
  }

  profile(name: string): Promise<ClusterProfile | undefined> {
    return absentIfNotFound(
      () =>
        this.#custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name }) as Promise<ClusterProfile>,
    );
  }

  clusterRequest(name: string, namespace: string): Promise<ClusterRequest | undefined> {
    return absentIfNotFound(
      () =>
        this.#custom.getNamespacedCustomObject({
          ...RESOURCES.ClusterRequest,
          namespace,
          name,
        }) as Promise<ClusterRequest>,
    );
  }

  async deleteClusterRequest(name: string, namespace: string): Promise<void> {
    await absentIfNotFound(() =>
      this.#custom.deleteNamespacedCustomObject({ ...RESOURCES.ClusterRequest, namespace, name }),
    );
  }

  async deleteCluster(name: string, namespace: string): Promise<void> {
    await absentIfNotFound(() =>
      this.#custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name }),
    );
  }

  /** Annotates a protected Cluster so that deleting it goes through (the explicit step of deletion protection). */
  async confirmDeletion(name: string, namespace: string): Promise<void> {
    await absentIfNotFound(() =>
      this.#custom.patchNamespacedCustomObject(
        {
          ...RESOURCES.Cluster,
          namespace,
          name,
          body: { metadata: { annotations: { [CLUSTER_ANNOTATIONS.confirmDeletion]: "true" } } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      ),
    );
  }

  /** Ready replicas of a Deployment; undefined when it does not exist. */
  async readyReplicas(name: string, namespace: string): Promise<number | undefined> {
    const deployment = await absentIfNotFound(() => this.#apps.readNamespacedDeployment({ name, namespace }));
    return deployment === undefined ? undefined : (deployment.status?.readyReplicas ?? 0);
  }

  /** Scales a Deployment; a missing one is fine. Resolves with the replicas still running. */
  async scale(name: string, namespace: string, replicas: number): Promise<number> {
    const scaled = await absentIfNotFound(() =>
      this.#apps.patchNamespacedDeploymentScale(
        { name, namespace, body: { spec: { replicas } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      ),
    );
    return scaled?.status?.replicas ?? 0;
  }
}

/** What a Cluster waits for, in one line (its phase and the first condition not True). */
export function clusterProgress(cluster: Cluster | undefined): string {
  if (cluster === undefined) return "not there yet";
  const waiting = cluster.status?.conditions?.find((c) => c.status !== "True");
  return `${cluster.status?.phase ?? "no phase yet"}${waiting ? `: ${waiting.reason}: ${waiting.message}` : ""}`;
}
