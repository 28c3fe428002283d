/**
 * The caches of a plan: each lists once from where the engine's would (the API server), then only changes in
 * memory, as the plan applies its changes and the writes it predicts. Nothing here writes anywhere.
 */
import { objectKey } from "../../api/object-key.ts";
import { apiServerSource, type ListWatchSource, secretSource, type WatchedObject } from "../informer.ts";
import type { CacheSourceOf, CacheSpec } from "../informers.ts";

/** Which resource an object belongs to: the same triple caches and RESOURCES use. */
export interface ResourceId {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** One cache watching a resource: its selector, and the keys it holds (to tell it of objects leaving it). */
interface Watcher {
  readonly resource: ResourceId;
  readonly labelSelector: string | undefined;
  readonly namespace: string | undefined;
  readonly keys: Set<string>;
  onEvent?: (type: string, object: unknown) => void;
}

const resourceName = (resource: ResourceId) => `${resource.plural}.${resource.group}/${resource.version}`;

/**
 * Guarantees: a cache sees an object put here exactly as the engine's would see it written (added, modified,
 * deleted, or leaving it when its labels no longer match its selector); the base sources are only listed,
 * never watched, and nothing is ever sent anywhere.
 */
export class PlannedSources {
  readonly #watchers: Watcher[] = [];
  readonly #base: CacheSourceOf;

  /** `base` lists the live objects; by default the API server's, as the engine's caches list them. */
  constructor(base: CacheSourceOf) {
    this.#base = base;
  }

  /** The source of one cache, for {@link InformerSet}'s `sourceOf`. */
  readonly sourceOf: CacheSourceOf = (spec, namespace) => {
    const watcher: Watcher = {
      resource: spec.resource,
      labelSelector: spec.labelSelector,
      namespace,
      keys: new Set(),
    };
    this.#watchers.push(watcher);
    const base = this.#base(spec, namespace);
    return {
      list: async (params) => {
        const page = await base.list(params);
        for (const item of page.items) watcher.keys.add(objectKey(item as WatchedObject));
        return page;
      },
      // No watch of the API server: the plan's own changes are the only events.
      watch: async (_params, onEvent) => {
        watcher.onEvent = onEvent;
        return { abort: () => {} };
      },
    };
  };

  /** Every cache of `resource` sees `object` as stored now (or, with `deleted`, as gone). */
  put(resource: ResourceId, object: WatchedObject, deleted = false): void {
    const key = objectKey(object);
    const name = resourceName(resource);
    for (const watcher of this.#watchers) {
      if (resourceName(watcher.resource) !== name) continue;
      if (watcher.namespace && object.metadata?.namespace !== watcher.namespace) continue;
      const labels = (object.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      const inside = !deleted && selectorHolds(watcher.labelSelector, labels);
      if (inside) {
        watcher.keys.add(key);
        watcher.onEvent?.("MODIFIED", object);
      } else if (watcher.keys.delete(key)) {
        watcher.onEvent?.("DELETED", object);
      }
    }
  }
}

/** The engine's own sources: custom resources and Secrets from the API server, listed as its caches list them. */
export function apiServerSources(kubeConfig: Parameters<typeof apiServerSource>[0]): CacheSourceOf {
  return (spec: CacheSpec<WatchedObject>, namespace) =>
    spec.secrets
      ? secretSource(kubeConfig, namespace)
      : apiServerSource(kubeConfig, spec.resource, namespace);
}

/** Sources holding only `objects` (each with apiVersion and kind): a plan over a world given in memory. */
export function memorySources(objects: readonly WatchedObject[]): CacheSourceOf {
  return (spec, namespace) => {
    const apiVersion = spec.resource.group
      ? `${spec.resource.group}/${spec.resource.version}`
      : spec.resource.version;
    const items = objects.filter(
      (object) =>
        object.apiVersion === apiVersion &&
        object.kind === spec.kind &&
        (!namespace || object.metadata?.namespace === namespace) &&
        selectorHolds(
          spec.labelSelector,
          (object.metadata as { labels?: Record<string, string> } | undefined)?.labels,
        ),
    );
    const source: ListWatchSource<unknown> = {
      list: async () => ({ items: structuredClone(items), metadata: { resourceVersion: "1" } }),
      watch: async () => ({ abort: () => {} }),
    };
    return source;
  };
}

/**
 * Whether `labels` satisfy an equality-based label selector as caches use them (`key`, `!key`, `key=value`,
 * `key==value`, `key!=value`, joined by commas); an absent selector selects everything.
 */
export function selectorHolds(selector: string | undefined, labels: Readonly<Record<string, string>> = {}) {
  if (!selector) return true;
  return selector
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .every((part) => {
      const unequal = /^([^!=]+)!=(.*)$/.exec(part);
      if (unequal) return labels[unequal[1]?.trim() ?? ""] !== unequal[2]?.trim();
      const equal = /^([^!=]+)==?(.*)$/.exec(part);
      if (equal) return labels[equal[1]?.trim() ?? ""] === equal[2]?.trim();
      if (part.startsWith("!")) return !Object.hasOwn(labels, part.slice(1).trim());
      return Object.hasOwn(labels, part);
    });
}
