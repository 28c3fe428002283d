/** An informer: list + watch into a local cache, resuming from resourceVersion and recovering from every error. */

import { CoreV1Api, CustomObjectsApi, type KubeConfig, Watch } from "@kubernetes/client-node";
import { objectKey } from "../api/object-key.ts";
import { type Clock, systemClock, type TimerHandle } from "./clock.ts";
import { type BackoffOptions, backoffDelay, WATCH_RECONNECT_BACKOFF } from "./controllers/backoff.ts";

/** What changed in the cache. `key` is `namespace/name`, or `name` for cluster-scoped objects. */
export interface InformerEvent<T> {
  readonly type: "upsert" | "delete";
  readonly key: string;
  readonly object: T;
}

/** The least an object must have to be cached: a name and a resourceVersion. */
export interface WatchedObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
  };
}

/** One page of a list call, as the API server sends it. */
export interface ListPage<T> {
  readonly items: readonly T[];
  readonly metadata?: { readonly continue?: string; readonly resourceVersion?: string };
}

/** How an informer lists and watches; the default talks to the API server through client-node. */
export interface ListWatchSource<T> {
  list(params: { labelSelector?: string; limit: number; continue?: string }): Promise<ListPage<T>>;
  /**
   * Starts a watch; `onEvent` gets each event (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`),
   * `onDone` is called once when the watch ends, with the error if it failed. Resolves to a stopper.
   */
  watch(
    params: { resourceVersion: string; labelSelector?: string },
    onEvent: (type: string, object: T) => void,
    onDone: (error: unknown) => void,
  ): Promise<{ abort(): void }>;
}

/** What to watch and how to recover. */
export interface InformerProps {
  readonly kubeConfig: KubeConfig;
  /** The custom resource to watch, across all namespaces unless {@link InformerProps.namespace} is set. */
  readonly resource: { readonly group: string; readonly version: string; readonly plural: string };
  /** Watch only this namespace (a namespaced resource); absent: every namespace. */
  readonly namespace?: string;
  /** Kind of the objects (list items carry no kind; the cache adds it). */
  readonly kind: string;
  readonly labelSelector?: string;
  /** Page size of list calls. */
  readonly pageSize?: number;
  /** Reconnect delays after errors; default {@link WATCH_RECONNECT_BACKOFF} (200 ms doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  readonly clock?: Clock;
  /** Told about every error the informer recovers from (for logs and metrics). */
  readonly onError?: (error: unknown) => void;
  /** Told when a watch ended normally and is resumed (the server's or the client's timeout): worth a debug line. */
  readonly onWatchEnded?: (why: string) => void;
  /** Replaces the API server (tests). */
  readonly source?: ListWatchSource<unknown>;
}

/**
 * The default {@link ListWatchSource}: list and watch a custom resource across all namespaces, or in
 * `namespace` only.
 */
export function apiServerSource<T>(
  kubeConfig: KubeConfig,
  resource: InformerProps["resource"],
  namespace?: string,
): ListWatchSource<T> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const watch = new Watch(kubeConfig);
  const { group, version, plural } = resource;
  return {
    async list(params) {
      const query = {
        group,
        version,
        plural,
        labelSelector: params.labelSelector,
        limit: params.limit,
        _continue: params.continue,
      };
      // Plain JSON (timestamps stay strings), exactly as watch events arrive.
      const page = (await (namespace
        ? api.listNamespacedCustomObject({ ...query, namespace })
        : api.listClusterCustomObject(query))) as {
        items: T[];
        metadata?: { continue?: string; _continue?: string; resourceVersion?: string };
      };
      const next = page.metadata?.continue || page.metadata?._continue;
      return {
        items: page.items,
        metadata: {
          ...(next ? { continue: next } : {}),
          ...(page.metadata?.resourceVersion ? { resourceVersion: page.metadata.resourceVersion } : {}),
        },
      };
    },
    watch(params, onEvent, onDone) {
      return watch.watch(
        `/apis/${group}/${version}/${namespacePath(namespace)}${plural}`,
        {
          resourceVersion: params.resourceVersion,
          allowWatchBookmarks: true,
          labelSelector: params.labelSelector,
        },
        onEvent,
        onDone,
      );
    },
  };
}

/**
 * A {@link ListWatchSource} for Secrets across all namespaces, or in `namespace` only (core API), narrowed
 * by a label selector: the engine watches only the Secrets it made.
 */
export function secretSource<T>(kubeConfig: KubeConfig, namespace?: string): ListWatchSource<T> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const watch = new Watch(kubeConfig);
  return {
    async list(params) {
      const query = {
        ...(params.labelSelector ? { labelSelector: params.labelSelector } : {}),
        limit: params.limit,
        ...(params.continue ? { _continue: params.continue } : {}),
      };
      const page = await (namespace
        ? core.listNamespacedSecret({ ...query, namespace })
        : core.listSecretForAllNamespaces(query));
      return {
        items: page.items as unknown as T[],
        metadata: {
          ...(page.metadata?._continue ? { continue: page.metadata._continue } : {}),
          ...(page.metadata?.resourceVersion ? { resourceVersion: page.metadata.resourceVersion } : {}),
        },
      };
    },
    watch(params, onEvent, onDone) {
      return watch.watch(
        `/api/v1/${namespacePath(namespace)}secrets`,
        {
          resourceVersion: params.resourceVersion,
          allowWatchBookmarks: true,
          labelSelector: params.labelSelector,
        },
        onEvent,
        onDone,
      );
    },
  };
}

/** The path segment that narrows a list or watch URL to one namespace; empty for all namespaces. */
function namespacePath(namespace: string | undefined): string {
  return namespace ? `namespaces/${encodeURIComponent(namespace)}/` : "";
}

/**
 * The object without `metadata.managedFields`: the server-side apply bookkeeping is often the larger
 * half of an object, and nothing in the engine reads it (nor writes it: writes touch only finalizers,
 * labels, annotations, the spec fields a machine owns, and status).
 */
export function withoutManagedFields<T extends WatchedObject>(object: T): T {
  const metadata = object.metadata as (WatchedObject["metadata"] & { managedFields?: unknown }) | undefined;
  if (metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...object, metadata: rest };
}

/**
 * Flow: list (paged) → replace the cache, emitting upserts and deletes for the differences → watch from
 * the list's resourceVersion with bookmarks → on each event update the cache and emit. When a watch
 * ends normally it resumes from the last resourceVersion seen; on 410 Gone (history compacted) it
 * relists; on any other error it retries after an exponential backoff, reset by the next success.
 *
 * Guarantees: after {@link Informer.start} resolves the cache holds a complete list; no change is
 * missed across reconnects (a relist emits what happened meanwhile, deletes included). Handlers run
 * synchronously and must not throw.
 */
export class Informer<T extends WatchedObject> {
  readonly #props: InformerProps;
  readonly #clock: Clock;
  readonly #source: ListWatchSource<T>;
  readonly #cache = new Map<string, T>();
  readonly #handlers: Array<(event: InformerEvent<T>) => void> = [];
  #resourceVersion = "";
  #failures = 0;
  #synced = false;
  #stopped = false;
  #abort: { abort(): void } | undefined;
  #retry: TimerHandle | undefined;

  constructor(props: InformerProps) {
    this.#props = props;
    this.#clock = props.clock ?? systemClock;
    this.#source =
      (props.source as ListWatchSource<T> | undefined) ??
      apiServerSource<T>(props.kubeConfig, props.resource, props.namespace);
  }

  get #apiVersion(): string {
    const { group, version } = this.#props.resource;
    return group ? `${group}/${version}` : version; // the core group has no prefix
  }

  /** Registers a handler for cache changes. */
  on(handler: (event: InformerEvent<T>) => void): void {
    this.#handlers.push(handler);
  }

  /** The cached object with this key. */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** How many objects the cache holds. */
  get size(): number {
    return this.#cache.size;
  }

  /** The key of every cached object. */
  keys(): IterableIterator<string> {
    return this.#cache.keys();
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  /** Whether the first list has completed. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /**
   * Lists, fills the cache and starts watching; resolves after the first successful list. Also how a
   * watch recovers when its resourceVersion is too old (410): the same list, then a watch from there.
   */
  async start(): Promise<void> {
    for (;;) {
      if (this.#stopped) return;
      try {
        await this.#relist();
        break;
      } catch (error) {
        await this.#sleepAfter(error);
      }
    }
    this.#watchFromHere();
  }

  /** Stops watching; the cache stays readable. */
  stop(): void {
    this.#stopped = true;
    this.#retry?.cancel();
    this.#abort?.abort();
  }

  async #relist(): Promise<void> {
    const seen = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.#source.list({
        ...(this.#props.labelSelector ? { labelSelector: this.#props.labelSelector } : {}),
        limit: this.#props.pageSize ?? 500,
        ...(continueToken ? { continue: continueToken } : {}),
      });
      for (const item of page.items) {
        seen.set(objectKey(item), {
          apiVersion: this.#apiVersion,
          kind: this.#props.kind,
          ...withoutManagedFields(item),
        });
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (continueToken);

    for (const [key, object] of this.#cache) {
      if (!seen.has(key)) {
        this.#cache.delete(key);
        this.#emit({ type: "delete", key, object });
      }
    }
    for (const [key, object] of seen) {
      const previous = this.#cache.get(key);
      this.#cache.set(key, object);
      if (previous?.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
        this.#emit({ type: "upsert", key, object });
      }
    }
    this.#resourceVersion = resourceVersion;
    this.#synced = true;
    this.#failures = 0;
  }

  #watchFromHere(): void {
    if (this.#stopped) return;
    let gone = false;
    let events = 0;
    const startedAt = this.#clock.now();
    this.#source
      .watch(
        {
          resourceVersion: this.#resourceVersion,
          ...(this.#props.labelSelector ? { labelSelector: this.#props.labelSelector } : {}),
        },
        (phase: string, object: T) => {
          if (phase === "ERROR") {
            // A Status object: 410 means our resourceVersion is too old to resume from.
            gone ||= (object as unknown as { code?: number }).code === 410;
            return;
          }
          events++;
          const version = object.metadata?.resourceVersion;
          if (version) this.#resourceVersion = version;
          this.#failures = 0;
          if (phase === "BOOKMARK") return;
          const key = objectKey(object);
          if (phase === "DELETED") {
            this.#cache.delete(key);
            this.#emit({ type: "delete", key, object });
          } else {
            const slim = withoutManagedFields(object);
            this.#cache.set(key, slim);
            this.#emit({ type: "upsert", key, object: slim });
          }
        },
        (error: unknown) => {
          this.#abort = undefined;
          if (this.#stopped) return;
          if (gone || isGone(error)) {
            void this.start();
          } else if (isInactivityTimeout(error)) {
            // client-node ends a watch that said nothing for 30 s: normal on a quiet resource, resume at once.
            this.#props.onWatchEnded?.("no event for a while (client timeout)");
            this.#watchFromHere();
          } else if (error) {
            void this.#sleepAfter(error).then(() => this.#watchFromHere());
          } else if (events === 0 && this.#clock.now() - startedAt < 1_000) {
            // Closed at once with nothing said: treat as a failure, or we would spin.
            void this.#sleepAfter(new Error("watch closed immediately")).then(() => this.#watchFromHere());
          } else {
            this.#props.onWatchEnded?.("ended by the server");
            this.#watchFromHere(); // the server ended the watch normally: resume where we were
          }
        },
      )
      .then(
        (abort) => {
          this.#abort = abort;
          if (this.#stopped) abort.abort();
        },
        (error: unknown) => {
          if (this.#stopped) return;
          void this.#sleepAfter(error).then(() => this.#watchFromHere());
        },
      );
  }

  #sleepAfter(error: unknown): Promise<void> {
    this.#props.onError?.(error);
    this.#failures++;
    const delay = backoffDelay(this.#failures, this.#props.backoff ?? WATCH_RECONNECT_BACKOFF);
    return new Promise((resolve) => {
      this.#retry = this.#clock.schedule(resolve, delay);
    });
  }

  #emit(event: InformerEvent<T>): void {
    for (const handler of this.#handlers) handler(event);
  }
}

/** client-node's Watch aborts with a `TimeoutError` after a while without data; nothing went wrong. */
function isInactivityTimeout(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "TimeoutError";
}

function isGone(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const candidate = error as { code?: number; statusCode?: number; message?: string };
  return (
    candidate.code === 410 || candidate.statusCode === 410 || /\b410\b|Gone/.test(candidate.message ?? "")
  );
}
