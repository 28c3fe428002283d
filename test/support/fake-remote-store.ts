/**
 * A remote API server's custom objects in memory, as far as the remote-object recipes call them (get, list with a
 * label selector, create, JSON patch with its tests, merge patch guarded by resourceVersion, delete), with errors
 * shaped as the client's (a code and a Status body), and a kill switch: every write (here, or of records through
 * {@link KilledRecords}) counts, and the one at `killAt` throws {@link Killed} before it lands, as a kill -9 would
 * leave it. For pure tests of crash windows; the real API server tests stay the measure of the real thing.
 */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { findCause } from "../../src/api/error-message.ts";
import { applied, type PatchOperation } from "../../src/machines/shared/json-patch.ts";
import type { RemoteObject, RemoteRecord } from "../../src/providers/shared/remote-object.ts";
import type { PoolRecords } from "../../src/providers/shared/remote-object-pools.ts";

/** The process was killed at this write. */
export class Killed extends Error {
  readonly at: number;

  constructor(at: number) {
    super(`killed at write ${at}`);
    this.at = at;
  }
}

/** Whether `error` (or one of its causes) is a {@link Killed}: what a killed process would never have seen. */
export const isKilled = (error: unknown): boolean =>
  findCause(error, (cause): cause is Killed => cause instanceof Killed) !== undefined;

/** Counts writes; throws {@link Killed} at write number `killAt` (0-based) and at every one after (it is dead). */
export class WriteClock {
  writes = 0;
  killAt = Number.POSITIVE_INFINITY;

  /** Before each write: count it, or die. */
  write(): void {
    const at = this.writes++;
    if (at >= this.killAt) throw new Killed(at);
  }

  /** From now on, die at the `n`-th write (undefined: never). */
  killAfter(n: number | undefined): void {
    this.writes = 0;
    this.killAt = n ?? Number.POSITIVE_INFINITY;
  }
}

const apiError = (code: number, reason: string, message: string): Error =>
  Object.assign(new Error(message), { code, body: { kind: "Status", code, reason, message } });

/** RFC 7386: objects merge key by key, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** Whether `labels` match a selector of `key=value` and `key` (exists) terms. */
function matches(labels: Readonly<Record<string, string>>, selector: string | undefined): boolean {
  return (selector ?? "")
    .split(",")
    .filter((term) => term !== "")
    .every((term) => {
      const [key = "", value] = term.split("=");
      return value === undefined ? key in labels : labels[key] === value;
    });
}

interface Call {
  readonly namespace: string;
  readonly name?: string;
  readonly body?: unknown;
  readonly labelSelector?: string;
}

/** One kind of custom object in memory (one resource: the tests use one per store). */
export class FakeRemoteStore {
  readonly #objects = new Map<string, RemoteObject>();
  readonly #clock: WriteClock;
  #version = 0;

  constructor(clock: WriteClock) {
    this.#clock = clock;
  }

  /** Every object, as stored. */
  objects<O extends RemoteObject>(): O[] {
    return [...this.#objects.values()] as O[];
  }

  /** The object `namespace/name`, if there. */
  get<O extends RemoteObject>(namespace: string, name: string): O | undefined {
    return this.#objects.get(`${namespace}/${name}`) as O | undefined;
  }

  /** The custom objects client the recipes call. */
  get api(): CustomObjectsApi {
    const read = ({ namespace, name = "" }: Call): RemoteObject => {
      const object = this.#objects.get(`${namespace}/${name}`);
      if (!object) throw apiError(404, "NotFound", `"${name}" not found`);
      return structuredClone(object);
    };
    const store = (object: RemoteObject): RemoteObject => {
      const stored = {
        ...object,
        metadata: { ...object.metadata, resourceVersion: String(++this.#version) },
      };
      this.#objects.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
      return structuredClone(stored);
    };
    const calls = {
      getNamespacedCustomObject: async (call: Call) => read(call),
      listNamespacedCustomObject: async ({ namespace, labelSelector }: Call) => ({
        items: [...this.#objects.values()]
          .filter(
            (o) => o.metadata.namespace === namespace && matches(o.metadata.labels ?? {}, labelSelector),
          )
          .map((o) => structuredClone(o)),
      }),
      createNamespacedCustomObject: async ({ namespace, body }: Call) => {
        const object = body as RemoteObject;
        if (this.#objects.has(`${namespace}/${object.metadata.name}`))
          throw apiError(409, "AlreadyExists", `"${object.metadata.name}" already exists`);
        this.#clock.write();
        return store({ ...object, metadata: { ...object.metadata, namespace } });
      },
      patchNamespacedCustomObject: async (call: Call) => {
        const stored = read(call);
        let next: RemoteObject;
        if (Array.isArray(call.body)) {
          try {
            next = applied(stored, call.body as PatchOperation[]);
          } catch (error) {
            throw apiError(422, "Invalid", `the JSON patch failed: ${(error as Error).message}`);
          }
        } else {
          const body = call.body as { metadata?: { resourceVersion?: string | null } };
          const guard = body.metadata?.resourceVersion;
          if (guard !== undefined && guard !== stored.metadata.resourceVersion)
            throw apiError(409, "Conflict", "the object has been modified");
          next = mergePatch(stored, body) as RemoteObject;
        }
        this.#clock.write();
        return store(next);
      },
      deleteNamespacedCustomObject: async (call: Call) => {
        read(call);
        this.#clock.write();
        this.#objects.delete(`${call.namespace}/${call.name}`);
        return {};
      },
    };
    return calls as unknown as CustomObjectsApi;
  }
}

/** Records on a "disk" that outlives the instance (a restart reads it again), each put or remove one counted write. */
export class KilledRecords<R extends RemoteRecord> implements PoolRecords<R> {
  readonly #disk: Map<string, R>;
  readonly #clock: WriteClock;

  constructor(disk: Map<string, R>, clock: WriteClock) {
    this.#disk = disk;
    this.#clock = clock;
  }

  get(uid: string): R | undefined {
    return this.#disk.get(uid);
  }

  has(uid: string): boolean {
    return this.#disk.has(uid);
  }

  values(): R[] {
    return [...this.#disk.values()];
  }

  put(record: R): void {
    if (JSON.stringify(this.#disk.get(record.uid)) === JSON.stringify(record)) return; // as RecordFile: no write
    this.#clock.write();
    this.#disk.set(record.uid, record);
  }

  remove(uid: string): void {
    if (!this.#disk.has(uid)) return;
    this.#clock.write();
    this.#disk.delete(uid);
  }
}
