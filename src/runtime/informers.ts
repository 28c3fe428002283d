/** The engine's shared caches: one informer per cache spec, however many controllers read it. */
import type { KubeConfig } from "@kubernetes/client-node";
import { CAPI_LABELS } from "../api/cluster-api.ts";
import type { SecretObject } from "../api/common.ts";
import { RESOURCES, type ResourceKind } from "../api/constants.ts";
import type { Clock } from "./clock.ts";
import { Informer, type ListWatchSource, secretSource, type WatchedObject } from "./informer.ts";
import { apiStatusOf, errorMessage, type Logger } from "./logger.ts";

/**
 * What one cache holds. Specs are values: every reader of the same spec (by `name`) shares one watch.
 * `T` is the type of the cached objects (a phantom: nothing at run time checks it).
 */
export interface CacheSpec<T extends WatchedObject> {
  /** Unique among caches, e.g. the kind of a resource cache or the name of a Secret cache. */
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

/** The parts of a Secret a cache keeps. */
export type { SecretObject };

/** The cache of one of our custom resources, all of it (named after its kind). */
export function resourceCache<T extends WatchedObject>(kind: ResourceKind): CacheSpec<T> {
  return { name: kind, kind, resource: RESOURCES[kind] };
}

/** The cache of a kind of ours outside {@link RESOURCES}, all of it: its machine definition names its resource. */
export function definitionCache<T extends WatchedObject>(definition: {
  readonly kind: string;
  readonly resource: CacheSpec<T>["resource"];
}): CacheSpec<T> {
  return { name: definition.kind, kind: definition.kind, resource: definition.resource };
}

/** A cache of only the Secrets that carry `label` (those the engine made), under `name`. */
export function secretCache(name: string, label: string): CacheSpec<SecretObject> {
  return {
    name,
    kind: "Secret",
    resource: { group: "", version: "v1", plural: "secrets", namespaced: true },
    labelSelector: label,
    secrets: true,
  };
}

/** Which objects of the namespaced and the Cluster API kinds an engine sees (`--namespace`, `--watch-filter`). */
export interface CacheScope {
  /** Every namespaced cache lists and watches only this namespace; absent or empty: all namespaces. */
  readonly namespace?: string;
  /** Caches marked {@link CacheSpec.watchFiltered} hold only objects with `cluster.x-k8s.io/watch-filter` = this. */
  readonly watchFilter?: string;
}

/**
 * Where a cache lists and watches instead of the API server (the default): e.g. `plan`'s caches, read once from
 * the API server and then changed in memory only. `namespace` is the scope's, for a namespaced cache.
 */
export type CacheSourceOf = (
  spec: CacheSpec<WatchedObject>,
  namespace: string | undefined,
) => ListWatchSource<unknown>;

/** The label selector of `spec` within `scope`: its own, and the watch filter where it applies. */
export function cacheSelector(spec: CacheSpec<WatchedObject>, scope: CacheScope): string | undefined {
  const parts = [
    ...(spec.labelSelector ? [spec.labelSelector] : []),
    ...(spec.watchFiltered && scope.watchFilter ? [`${CAPI_LABELS.watchFilter}=${scope.watchFilter}`] : []),
  ];
  return parts.length > 0 ? parts.join(",") : undefined;
}

/**
 * The informers of one engine: one per cache name, however many readers declare it.
 *
 * Flow: every reader declares the caches it reads with {@link InformerSet.of} before
 * {@link InformerSet.start} (a controller's constructor or `watch`, a kind's `wakes`), which starts them
 * all and resolves once each holds a complete list; afterwards `of` hands out the caches declared.
 *
 * Guarantees: a cache first asked for after `start` is refused with an error naming it, never handed
 * out silently empty (it would never be started); two different specs under one name are refused too.
 */
export class InformerSet {
  readonly #informers = new Map<string, Informer<WatchedObject>>();
  /** The spec each cache was made from, to refuse a different one under the same name. */
  readonly #specs = new Map<string, CacheSpec<WatchedObject>>();
  #started = false;
  readonly #kubeConfig: KubeConfig;
  readonly #log: Logger;
  readonly #clock: Clock | undefined;
  readonly #scope: CacheScope;
  readonly #sourceOf: CacheSourceOf | undefined;

  constructor(
    kubeConfig: KubeConfig,
    log: Logger,
    clock?: Clock,
    scope: CacheScope = {},
    sourceOf?: CacheSourceOf,
  ) {
    this.#kubeConfig = kubeConfig;
    this.#log = log;
    this.#clock = clock;
    this.#scope = scope;
    this.#sourceOf = sourceOf;
  }

  /** The informer of `spec` if some kind or controller declared it; never makes one (e.g. an optional link). */
  declared<T extends WatchedObject>(spec: CacheSpec<T>): Informer<T> | undefined {
    return this.#informers.has(spec.name) ? this.of(spec) : undefined;
  }

  /** The informer of `spec`: made when first declared, before {@link InformerSet.start}; shared after. */
  of<T extends WatchedObject>(spec: CacheSpec<T>): Informer<T> {
    let informer = this.#informers.get(spec.name);
    if (informer) {
      const declared = this.#specs.get(spec.name);
      if (declared !== spec && !sameSpec(declared, spec)) {
        throw new Error(
          `cache ${spec.name} is declared twice, differently (${describeSpec(declared)} and ${describeSpec(spec)}); give the second its own name`,
        );
      }
    } else {
      if (this.#started) {
        throw new Error(
          `cache ${spec.name} (${describeSpec(spec)}) was first asked for after the caches started, so it would stay empty; declare it before start (in the controller's constructor or watch(), or the kind's wakes)`,
        );
      }
      const namespace = spec.resource.namespaced ? this.#scope.namespace || undefined : undefined;
      const labelSelector = cacheSelector(spec, this.#scope);
      informer = new Informer<WatchedObject>({
        kubeConfig: this.#kubeConfig,
        resource: spec.resource,
        kind: spec.kind,
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
        ...(this.#sourceOf
          ? { source: this.#sourceOf(spec, namespace) }
          : spec.secrets
            ? { source: secretSource(this.#kubeConfig, namespace) }
            : {}),
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
      this.#specs.set(spec.name, spec);
    }
    return informer as unknown as Informer<T>;
  }

  /** How many objects each cache holds (for metrics). */
  sizes(): Array<{ cache: string; count: number }> {
    return [...this.#informers].map(([cache, informer]) => ({ cache, count: informer.size }));
  }

  /** Starts every cache declared; resolves when all hold a complete list. No cache can be declared after. */
  async start(): Promise<void> {
    this.#started = true;
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

/** Whether two specs describe the same cache (specs are plain values; readers may build their own copy). */
function sameSpec(a: CacheSpec<WatchedObject> | undefined, b: CacheSpec<WatchedObject>): boolean {
  return describeSpec(a) === describeSpec(b);
}

/** A spec in words, for errors: what it lists and watches. */
function describeSpec(spec: CacheSpec<WatchedObject> | undefined): string {
  if (!spec) return "unknown";
  const { group, version, plural } = spec.resource;
  const selector = spec.labelSelector ? ` labelled ${spec.labelSelector}` : "";
  return `${group ? `${group}/` : ""}${version} ${plural}${selector}${spec.watchFiltered ? ", watch-filtered" : ""}`;
}
