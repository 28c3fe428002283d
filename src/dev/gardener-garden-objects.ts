/** What a Gardener landscape has before anyone asks for a Shoot (a project and its namespace, a CloudProfile), written to a test or demo garden. */
import { CustomObjectsApi, type KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { isNotFound } from "../api/error-message.ts";

/** The group and version the backend speaks. */
export const CORE = { group: "core.gardener.cloud", version: "v1beta1" } as const;

/** One Kubernetes version of a CloudProfile, as Gardener writes it. */
export interface CloudProfileVersion {
  readonly version: string;
  readonly classification?: "preview" | "supported" | "deprecated" | "expired";
  readonly expirationDate?: string;
  readonly lifecycle?: readonly { readonly classification: string; readonly startTime?: string }[];
}

/** A CloudProfile like provider-local's (one region `local`, one machine type). */
export function cloudProfile(name: string, versions: readonly CloudProfileVersion[]) {
  return {
    apiVersion: "core.gardener.cloud/v1beta1",
    kind: "CloudProfile",
    metadata: { name },
    spec: {
      type: "local",
      regions: [{ name: "local" }],
      kubernetes: { versions },
      machineTypes: [{ name: "local", cpu: "1", gpu: "0", memory: "8Gi" }],
      machineImages: [{ name: "local", versions: [{ version: "1.0.0", cri: [{ name: "containerd" }] }] }],
    },
  };
}

/** Creates the project `name` with its namespace `garden-<name>` (what gardener-controller-manager would make). */
export async function createProject(kubeConfig: KubeConfig, name: string): Promise<string> {
  const namespace = `garden-${name}`;
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  await objects.create({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: namespace,
      labels: { "project.gardener.cloud/name": name, "gardener.cloud/role": "project" },
    },
  });
  await kubeConfig.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    ...CORE,
    plural: "projects",
    body: {
      apiVersion: "core.gardener.cloud/v1beta1",
      kind: "Project",
      metadata: { name },
      spec: {
        namespace,
        owner: { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "owner@example.com" },
      },
    },
  });
  return namespace;
}

/** Creates (or replaces the spec of) a CloudProfile. */
export async function applyCloudProfile(
  kubeConfig: KubeConfig,
  name: string,
  versions: readonly CloudProfileVersion[],
): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const body = cloudProfile(name, versions);
  try {
    const stored = (await api.getClusterCustomObject({ ...CORE, plural: "cloudprofiles", name })) as {
      metadata: { resourceVersion: string };
    };
    await api.replaceClusterCustomObject({
      ...CORE,
      plural: "cloudprofiles",
      name,
      body: { ...body, metadata: { name, resourceVersion: stored.metadata.resourceVersion } },
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await api.createClusterCustomObject({ ...CORE, plural: "cloudprofiles", body });
  }
}

/** A workerless Shoot's spec on the `local` CloudProfile (the smallest Shoot Gardener accepts). */
export function workerlessShootSpec(cloudProfileName: string, version?: string) {
  return {
    cloudProfile: { name: cloudProfileName },
    region: "local",
    provider: { type: "local" },
    ...(version ? { kubernetes: { version } } : {}),
  };
}
