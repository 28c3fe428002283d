/** The engine's shared caches: one informer per cache spec, however many controllers read it. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { AccessRequest } from "../api/access-request.ts";
import type { Cluster } from "../api/cluster.ts";
import { CAPI_CLUSTER_RESOURCE, CAPI_LABELS, type CapiCluster } from "../api/cluster-api.ts";
import type { ClusterProfile } from "../api/cluster-profile.ts";
import type { ClusterRequest } from "../api/cluster-request.ts";
import type { ClusterRequestGrant } from "../api/cluster-request-grant.ts";
import { LABELS, RESOURCES, type ResourceKind } from "../api/constants.ts";
import type { ClusterEndpointObject, EngineCluster } from "../api/engine-cluster.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import type { Purpose } from "../api/purpose.ts";
import type { AccessSecret } from "../machines/access-request/facts.ts";
import type { Clock } from "./clock.ts";
import { Informer, secretSource, type WatchedObject } from "./informer.ts";
import { apiStatusOf, errorMessage, type Logger } from "./logger.ts";

export type { AccessSecret } from "../machines/access-request/facts.ts";

/**
 * What one cache holds. Specs are values: every reader of the same spec (by `name`) shares one watch.
 * `T` is the type of the cached objects (a phantom: nothing at run time checks it).
 */
export interface CacheSpec<T extends WatchedObject> {
  /** Unique among caches, e.g. `Cluster` or `AccessSecret`. */
  readonly name: string;
  readonly kind: string;
  readonly resource: {
    readonly group: string;
    readonly version: string;
    readonly plural: string;
    /** Namespaced kinds follow the engine's `--namespace`; cluster-scoped ones are always watched whole. */
    readonly namespaced?: boolean;
  };
  readonly labelSelector?: string;
  /**
   * Cluster API's objects: with `--watch-filter <value>` only those labelled
   * `cluster.x-k8s.io/watch-filter=<value>` are cached (so reconciled), as Cluster API's own controllers do.
   */
  readonly watchFiltered?: boolean;
  /** Core-API Secrets (listed and watched through CoreV1Api) instead of a custom resource. */
  readonly secrets?: boolean;
  /** Never set: carries `T`. */
  readonly objectType?: T;
}

/** The cache of one of our custom resources, all of it. */
export function resourceCache<T extends WatchedObject>(kind: ResourceKind): CacheSpec<T> {
  return { name: kind, kind, resource: RESOURCES[kind] };
}

/** The caches the built-in kinds read. */
export const CACHES = {
  clusters: resourceCache<Cluster>("Cluster"),
  profiles: resourceCache<ClusterProfile>("ClusterProfile"),
  providerConfigs: resourceCache<ProviderConfig>("ProviderConfig"),
  accessRequests: resourceCache<AccessRequest>("AccessRequest"),
  clusterRequests: resourceCache<ClusterRequest>("ClusterRequest"),
  purposes: resourceCache<Purpose>("Purpose"),
  grants: resourceCache<ClusterRequestGrant>("ClusterRequestGrant"),
  engineClusters: { ...resourceCache<EngineCluster>("EngineCluster"), watchFiltered: true },
  clusterEndpoints: resourceCache<ClusterEndpointObject>("ClusterEndpoint"),
  /** Cluster API's Clusters (only read, and only with the Cluster API side on): owners of EngineClusters. */
  capiClusters: {
    name: "CapiCluster",
    kind: "Cluster",
    resource: CAPI_CLUSTER_RESOURCE,
    watchFiltered: true,
  } satisfies CacheSpec<CapiCluster> as CacheSpec<CapiCluster>,
  /** Only the kubeconfig Secrets the engine made for EngineClusters (labelled with their uid). */
  kubeconfigSecrets: {
    name: "KubeconfigSecret",
    kind: "Secret",
    resource: { group: "", version: "v1", plural: "secrets", namespaced: true },
    labelSelector: LABELS.engineClusterUid,
    secrets: true,
  } satisfies CacheSpec<AccessSecret> as CacheSpec<AccessSecret>,
  /** Only the Secrets the engine made (labelled with their AccessRequest's uid). */
  accessSecrets: {
    name: "AccessSecret",
    kind: "Secret",
    resource: { group: "", version: "v1", plural: "secrets", namespaced: true },
    labelSelector: LABELS.accessRequestUid,
    secrets: true,
  } satisfies CacheSpec<AccessSecret> as CacheSpec<AccessSecret>,
} as const;

/** Which objects of the namespaced and the Cluster API kinds an engine sees (`--namespace`, `--watch-filter`). */
export interface CacheScope {
  /** Every namespaced cache lists and watches only this namespace; absent or empty: all namespaces. */
  readonly namespace?: string;
  /** Caches marked {@link CacheSpec.watchFiltered} hold only objects with `cluster.x-k8s.io/watch-filter` = this. */
  readonly watchFilter?: string;
}

/** The label selector of `spec` within `scope`: its own, and the watch filter where it applies. */
export function cacheSelector(spec: CacheSpec<WatchedObject>, scope: CacheScope): string | undefined {
  const parts = [
    ...(spec.labelSelector ? [spec.labelSelector] : []),
    ...(spec.watchFiltered && scope.watchFilter ? [`${CAPI_LABELS.watchFilter}=${scope.watchFilter}`] : []),
  ];
  return parts.length > 0 ? parts.join(",") : undefined;
}

/**
 * The informers of one engine. `of(spec)` makes a cache on first use; make every cache before
 * {@link InformerSet.start}, which starts them all and resolves once each holds a complete list.
 * The named getters are shorthands for the built-in caches.
 */
export class InformerSet {
  readonly #informers = new Map<string, Informer<WatchedObject>>();
  readonly #kubeConfig: KubeConfig;
  readonly #log: Logger;
  readonly #clock: Clock | undefined;
  readonly #scope: CacheScope;

  constructor(kubeConfig: KubeConfig, log: Logger, clock?: Clock, scope: CacheScope = {}) {
    this.#kubeConfig = kubeConfig;
    this.#log = log;
    this.#clock = clock;
    this.#scope = scope;
  }

  /** The informer of `spec`, made on first use. */
  of<T extends WatchedObject>(spec: CacheSpec<T>): Informer<T> {
    let informer = this.#informers.get(spec.name);
    if (!informer) {
      const namespace = spec.resource.namespaced ? this.#scope.namespace || undefined : undefined;
      const labelSelector = cacheSelector(spec, this.#scope);
      informer = new Informer<WatchedObject>({
        kubeConfig: this.#kubeConfig,
        resource: spec.resource,
        kind: spec.kind,
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
        ...(spec.secrets ? { source: secretSource(this.#kubeConfig, namespace) } : {}),
        ...(this.#clock ? { clock: this.#clock } : {}),
        onError: (error) => {
          const status = apiStatusOf(error);
          this.#log.warn("watch interrupted; recovering", {
            kind: spec.kind,
            error: errorMessage(error),
            ...(status ? { status } : {}),
          });
        },
        onWatchEnded: (why) => this.#log.debug("watch ended; resuming", { kind: spec.kind, why }),
      });
      this.#informers.set(spec.name, informer);
    }
    return informer as unknown as Informer<T>;
  }

  get clusters(): Informer<Cluster> {
    return this.of(CACHES.clusters);
  }
  get profiles(): Informer<ClusterProfile> {
    return this.of(CACHES.profiles);
  }
  get providerConfigs(): Informer<ProviderConfig> {
    return this.of(CACHES.providerConfigs);
  }
  get accessRequests(): Informer<AccessRequest> {
    return this.of(CACHES.accessRequests);
  }
  get accessSecrets(): Informer<AccessSecret> {
    return this.of(CACHES.accessSecrets);
  }

  /** How many objects each cache holds (for metrics). */
  sizes(): Array<{ cache: string; count: number }> {
    return [...this.#informers].map(([cache, informer]) => ({ cache, count: informer.size }));
  }

  /** Starts every informer made so far; resolves when all caches hold a complete list. */
  async start(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((informer) => informer.start()));
  }

  /** Whether every cache holds a complete list (readiness). */
  hasSynced(): boolean {
    return [...this.#informers.values()].every((informer) => informer.hasSynced());
  }

  stop(): void {
    for (const informer of this.#informers.values()) informer.stop();
  }
}

/** The engine's caches (the name the rest of the code knows them by). */
export type EngineInformers = InformerSet;
