/**
 * Objects held in memory as an API server would hold them, for runs of thousands of cases: caches list them
 * (through plan's PlannedSources, so every write reaches every cache as a watch event would), and a
 * MachineWriter patches them guarded by resourceVersion. Every write is recorded where the runtime writes.
 */

import { objectKey } from "../../src/api/object-key.ts";
import { applied, type PatchOperation } from "../../src/machines/shared/json-patch.ts";
import type { PatchTarget, RemoveTarget } from "../../src/runtime/api-server/patch-object.ts";
import { ConflictError, GoneError } from "../../src/runtime/controllers/errors.ts";
import type { WatchedObject } from "../../src/runtime/informer.ts";
import type { MachineWriter } from "../../src/runtime/machine-writer.ts";
import { memorySources, PlannedSources, type ResourceId } from "../../src/runtime/plan/planned-sources.ts";

/** One write the runtime sent. */
export interface RecordedWrite {
  readonly plural: string;
  readonly key: string;
  readonly subresource: "status" | undefined;
  readonly operations: readonly PatchOperation[];
}

const idOf = (resource: { readonly plural: string }, key: string) => `${resource.plural}|${key}`;

/** The store, its caches' sources, and a writer that records. */
export class MemoryApi {
  readonly writes: RecordedWrite[] = [];
  readonly #objects = new Map<string, { resource: ResourceId; object: WatchedObject }>();
  readonly sources: PlannedSources;

  constructor(objects: ReadonlyArray<{ readonly resource: ResourceId; readonly object: WatchedObject }>) {
    for (const { resource, object } of objects)
      this.#objects.set(idOf(resource, objectKey(object)), { resource, object });
    this.sources = new PlannedSources(memorySources(objects.map(({ object }) => object)));
  }

  /** Every object as stored now. */
  objects(): WatchedObject[] {
    return [...this.#objects.values()].map(({ object }) => object);
  }

  get(resource: { readonly plural: string }, key: string): WatchedObject | undefined {
    return this.#objects.get(idOf(resource, key))?.object;
  }

  /** Stores `object` (or its absence) as a user's change would: every cache is told. */
  put(resource: ResourceId, object: WatchedObject, deleted = false): void {
    const id = idOf(resource, objectKey(object));
    if (deleted) this.#objects.delete(id);
    else this.#objects.set(id, { resource, object });
    this.sources.put(resource, object, deleted);
  }

  /** A writer as the API server answers the runtime's patches (conflict on a stale resourceVersion); `told` hears each. */
  writer(told: (write: RecordedWrite) => void = () => {}): MachineWriter {
    return {
      patch: async (target: PatchTarget, operations: readonly PatchOperation[], subresource) => {
        const key = target.namespace ? `${target.namespace}/${target.name}` : target.name;
        const stored = this.#objects.get(idOf(target, key));
        if (!stored) throw new GoneError(`${target.plural} ${key} is gone`);
        const metadata = stored.object.metadata as { resourceVersion?: string };
        if (target.resourceVersion && metadata.resourceVersion !== target.resourceVersion)
          throw new ConflictError(`${target.plural} ${key} changed`);
        const write = { plural: target.plural, key, subresource, operations };
        this.writes.push(write);
        told(write);
        const next = applied(stored.object, operations) as WatchedObject & {
          metadata: { resourceVersion?: string; deletionTimestamp?: string; finalizers?: string[] };
        };
        const resourceVersion = String(Number(next.metadata.resourceVersion ?? "0") + 1);
        const written = { ...next, metadata: { ...next.metadata, resourceVersion } };
        const gone =
          written.metadata.deletionTimestamp !== undefined &&
          (written.metadata.finalizers ?? []).length === 0;
        this.put(stored.resource, written, gone);
        return written;
      },
      remove: async (target: RemoveTarget) => {
        const key = target.namespace ? `${target.namespace}/${target.name}` : target.name;
        const stored = this.#objects.get(idOf(target, key));
        if (stored) this.put(stored.resource, stored.object, true);
      },
      record: () => {},
    };
  }
}
