/**
 * What `landscape up` writes, purely: the objects of the bootstrap (the landscape's namespace, its
 * ProviderConfigs and the platform Cluster), the scheduler configuration and ClusterRequests of the engine in the
 * platform cluster, and that engine's own manifests (deploy/base with what deploy/kind adds, for this host).
 */
import { stringify } from "yaml";
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterRequest } from "../../api/cluster-request.ts";
import type { JsonValue } from "../../api/common.ts";
import { CLUSTER_LABELS } from "../../api/constants/cluster.ts";
import { CLUSTER_REQUEST_LABELS } from "../../api/constants/cluster-request.ts";
import { CLUSTERS_API_VERSION, ENGINE_API_VERSION } from "../../api/constants.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import { type Landscape, type LandscapePurpose, PLATFORM_PURPOSE } from "./landscape-file.ts";

/** Where the landscape's Clusters and ClusterRequests live, on the bootstrap and then in the platform cluster. */
export const LANDSCAPE_NAMESPACE = "openmcp-landscape";
/** The platform Cluster's name. */
export const PLATFORM_CLUSTER = "platform";
/** deploy/base's names, kept. */
export const ENGINE_NAMESPACE = "openmcp-engine-system";
export const ENGINE_DEPLOYMENT = "openmcp-engine";
export const SCHEDULER_CONFIG_MAP = "openmcp-engine-scheduler";
/** Where a Pod finds the host's Docker socket: the platform node mounts it there, the Pod at the usual path. */
export const NODE_DOCKER_SOCKET = "/var/run/host-docker.sock";
/** The purposes openMCP keeps Exclusive: one cluster per request. */
const EXCLUSIVE_PURPOSES = new Set(["mcp"]);
/** The bootstrapper's share of its workload clusters. */
const WORKLOAD_TENANCY_COUNT = 20;

/** An object to apply: what server-side apply needs of it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string };
}

/** This host as the engine in the platform cluster reaches it. */
export interface LandscapeHost {
  /** The engine's state folder: the same path on the host, in the platform node and in the Pod. */
  readonly stateFolder: string;
  /** The host's Docker socket and its group. */
  readonly dockerSocket: string;
  readonly dockerSocketGroup: number;
  /** The uid the engine's Pod runs as (it writes the state folder). */
  readonly podUser: number;
  /** The engine's image, present in the platform node. */
  readonly image: string;
}

/** The ProviderConfig the platform cluster is made from: the landscape's, plus the host's socket and state folder. */
export const platformConfigName = (landscape: Landscape): string =>
  `${landscape.providerConfig.name}-platform`;

/** The profile the engine publishes for one of the landscape's ProviderConfigs. */
export const profileOf = (landscape: Landscape, configName: string): string =>
  `${landscape.environment}.${landscape.providerName}.${configName}`;

/** The purposes whose requests share `owner`'s cluster, `owner` first. */
export function purposesServedBy(landscape: Landscape, owner: string): string[] {
  return [
    owner,
    ...landscape.purposes.filter((p) => p.sharesClusterOf === owner).map((purpose) => purpose.name),
  ];
}

/**
 * Where the engine runs once the landscape is up: in a Pod of the platform cluster where the backend's clusters
 * have nodes (kind); else as a process on this machine against the platform cluster (a Gardener Shoot of the
 * simulated gardenlet, a local control plane: no nodes to run a Pod on).
 */
export type EnginePlacement = "pod" | "process";

export const enginePlacement = (landscape: Landscape): EnginePlacement =>
  landscape.backend === "kind" ? "pod" : "process";

/** The landscape's Secrets with their keys' text (`read` gives a file's text). */
export function secretObjects(landscape: Landscape, read: (path: string) => string): Manifest[] {
  return landscape.secrets.map(
    (secret) =>
      ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: secret.name, namespace: secret.namespace ?? LANDSCAPE_NAMESPACE },
        stringData: Object.fromEntries(Object.entries(secret.files).map(([key, path]) => [key, read(path)])),
      }) as Manifest,
  );
}

/** The namespaces the landscape's objects live in. */
export function landscapeNamespaces(landscape: Landscape): Manifest[] {
  const names = new Set([
    LANDSCAPE_NAMESPACE,
    ...landscape.secrets.flatMap((s) => (s.namespace ? [s.namespace] : [])),
  ]);
  return [...names].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } }));
}

/**
 * What the bootstrap gets: the namespaces, the Secrets, both ProviderConfigs and the platform Cluster (protected).
 * With the host an engine Pod needs (kind), the platform's config mounts its Docker socket and the state folder into
 * the platform's node.
 */
export function bootstrapObjects(
  landscape: Landscape,
  host: LandscapeHost | undefined,
  secrets: readonly Manifest[] = [],
): Manifest[] {
  const settings = landscape.providerConfig.spec.settings;
  const platformSettings =
    host !== undefined
      ? {
          ...settings,
          extraMounts: [
            ...mountsOf(settings),
            { hostPath: host.dockerSocket, containerPath: NODE_DOCKER_SOCKET },
            { hostPath: host.stateFolder, containerPath: host.stateFolder },
          ],
        }
      : settings;
  return [
    ...landscapeNamespaces(landscape),
    ...secrets,
    providerConfigObject(landscape),
    providerConfig(landscape, platformConfigName(landscape), platformSettings),
    platformCluster(landscape),
  ];
}

/** The landscape's ProviderConfig, which every purpose's cluster but the platform's is made from. */
export function providerConfigObject(landscape: Landscape): ProviderConfig {
  return providerConfig(landscape, landscape.providerConfig.name, landscape.providerConfig.spec.settings);
}

function mountsOf(settings: ProviderConfig["spec"]["settings"]): JsonValue[] {
  const mounts = settings?.extraMounts;
  return Array.isArray(mounts) ? mounts : [];
}

function providerConfig(
  landscape: Landscape,
  name: string,
  settings: ProviderConfig["spec"]["settings"],
): ProviderConfig {
  const { settings: _, ...spec } = landscape.providerConfig.spec;
  return {
    apiVersion: ENGINE_API_VERSION,
    kind: "ProviderConfig",
    metadata: { name },
    spec: {
      ...spec,
      providerRef: { name: landscape.providerName },
      ...(settings && Object.keys(settings).length > 0 ? { settings } : {}),
    },
  } as ProviderConfig;
}

/** The platform Cluster: Shared by the purposes that share it, kept without requests, protected from deletion. */
export function platformCluster(landscape: Landscape): Cluster {
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "Cluster",
    metadata: {
      name: PLATFORM_CLUSTER,
      namespace: LANDSCAPE_NAMESPACE,
      labels: {
        [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "false",
        [CLUSTER_LABELS.deletionProtection]: "true",
      },
    },
    spec: {
      profile: profileOf(landscape, platformConfigName(landscape)),
      tenancy: "Shared",
      purposes: purposesServedBy(landscape, PLATFORM_PURPOSE),
    },
  };
}

/**
 * The engine's scheduler configuration (openMCP operator format): each purpose with a cluster of its own maps to
 * the landscape's profile (the platform's to its own), the purposes sharing it to the same cluster; mcp is
 * Exclusive unless shared, workload Shared by up to 20 as the bootstrapper sets it, and the others' clusters stay
 * without requests.
 */
export function schedulerConfigYaml(landscape: Landscape): string {
  const purposeMappings: Record<string, unknown> = {};
  for (const owner of landscape.purposes.filter((p) => p.sharesClusterOf === undefined)) {
    const served = purposesServedBy(landscape, owner.name);
    const exclusive = served.length === 1 && EXCLUSIVE_PURPOSES.has(owner.name);
    const mapping = {
      ...(owner.name === "workload" ? { tenancyCount: WORKLOAD_TENANCY_COUNT } : {}),
      template: {
        ...(exclusive || owner.name === "workload"
          ? {}
          : { metadata: { labels: { [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "false" } } }),
        spec: {
          profile: profileOf(
            landscape,
            owner.name === PLATFORM_PURPOSE ? platformConfigName(landscape) : landscape.providerConfig.name,
          ),
          tenancy: exclusive ? "Exclusive" : "Shared",
          ...(served.length > 1 ? { purposes: served } : {}),
        },
      },
    };
    for (const purpose of served) purposeMappings[purpose] = mapping;
  }
  return stringify({ scheduler: { scope: "Cluster", strategy: "Balanced", purposeMappings } });
}

/** One ClusterRequest per purpose, named after it; those with a cluster of their own first. */
export function clusterRequests(landscape: Landscape): ClusterRequest[] {
  const order = (p: LandscapePurpose) => (p.sharesClusterOf === undefined ? 0 : 1);
  return [...landscape.purposes]
    .sort((a, b) => order(a) - order(b))
    .map((purpose) => ({
      apiVersion: CLUSTERS_API_VERSION,
      kind: "ClusterRequest",
      metadata: { name: purpose.name, namespace: LANDSCAPE_NAMESPACE },
      spec: { purpose: purpose.name },
    }));
}

type Json = Record<string, unknown>;

/**
 * The engine in the platform cluster: deploy/base's objects (`base`, parsed from its files, without the
 * scheduler ConfigMap, which is made here) with what deploy/kind adds, for this host: the image, the landscape's
 * provider name and environment, the host's Docker socket (the Pod joins its group only), the state folder at its
 * host path, and the scheduler configuration.
 */
export function engineManifests(
  landscape: Landscape,
  host: LandscapeHost,
  base: readonly Manifest[],
): Manifest[] {
  const objects = base
    .filter((object) => !(object.kind === "ConfigMap" && object.metadata?.name === SCHEDULER_CONFIG_MAP))
    .map((object) => (object.kind === "Deployment" ? engineDeployment(landscape, host, object) : object));
  if (!objects.some((object) => object.kind === "Deployment"))
    throw new Error("deploy/base has no Deployment of the engine");
  return [
    ...objects,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: SCHEDULER_CONFIG_MAP, namespace: ENGINE_NAMESPACE },
      data: { "config.yaml": schedulerConfigYaml(landscape) },
    } as Manifest,
  ];
}

function engineDeployment(landscape: Landscape, host: LandscapeHost, object: Manifest): Manifest {
  const deployment = structuredClone(object) as unknown as Json & { spec: { template: { spec: Json } } };
  const pod = deployment.spec.template.spec as {
    securityContext?: Json;
    containers: Array<{ name: string; image: string; args?: string[]; volumeMounts?: Json[] }>;
    volumes?: Json[];
  };
  pod.securityContext = {
    ...pod.securityContext,
    runAsUser: host.podUser,
    runAsGroup: host.podUser,
    fsGroup: host.podUser,
    supplementalGroups: [host.dockerSocketGroup],
  };
  const flags: Record<string, string> = {
    "--provider-name": landscape.providerName,
    "--environment": landscape.environment,
    "--state-dir": host.stateFolder,
  };
  for (const container of pod.containers) {
    container.image = host.image;
    container.args = (container.args ?? []).map((arg) => {
      const [flag] = arg.split("=", 1) as [string];
      return flags[flag] === undefined ? arg : `${flag}=${flags[flag]}`;
    });
    for (const [key, value] of Object.entries(landscape.backendOptions))
      container.args.push(`--backend-option=${key}=${value}`);
    container.volumeMounts = [
      ...(container.volumeMounts ?? []).map((mount) =>
        mount.name === "state" ? { ...mount, mountPath: host.stateFolder } : mount,
      ),
      { name: "docker", mountPath: "/var/run/docker.sock" },
    ];
  }
  pod.volumes = [
    ...(pod.volumes ?? []).map((volume) =>
      volume.name === "state"
        ? { name: "state", hostPath: { path: host.stateFolder, type: "Directory" } }
        : volume,
    ),
    { name: "docker", hostPath: { path: NODE_DOCKER_SOCKET, type: "Socket" } },
  ];
  return deployment as unknown as Manifest;
}
