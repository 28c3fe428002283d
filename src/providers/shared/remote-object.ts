/**
 * One recipe for backends whose cluster is one object on a remote API server that a controller there builds (a
 * Gardener Shoot, a Cluster API Cluster): create-or-adopt, update, merge patch, out-of-date, delete, written once.
 * A backend gives a {@link RemoteObjectKind}: how to reach its API server, what it wants the object to be, and how
 * to read the object's status; it keeps only that.
 *
 * Flow: `create` records where the object goes, then creates it (or, when it exists already and is this Cluster's,
 * brings it in line at the version it runs); `observe` reads it; `update` patches only what differs; `delete`
 * deletes it and keeps the record until the object is seen gone.
 *
 * Guarantees: one object per Cluster (a deterministic name and an owner mark: another Cluster's object is never
 * adopted); the record is written before the object is ordered, so an engine killed in between finds it on restart;
 * patches are JSON merge patches of exactly what differs, guarded by the resourceVersion read (never a full PUT); a
 * patch that the remote side took in and changed back is not sent again (see `patchWorthSending`).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { BackendPhase, ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { JsonObject, ObjectMeta } from "../../api/common.ts";
import { apiStatusOf, isConflict, isNotFound } from "../../api/error-message.ts";
import type { Logger } from "../../api/logger.ts";
import { describeCluster } from "./error-wording.ts";
import { patchWorthSending, type SentPatch } from "./merge-patch.ts";
import type { RecordFile } from "./record-file.ts";

/** What tells whose an object is: the Cluster's uid, namespace and name. */
export type OwnerOf = Pick<ClusterTarget, "uid" | "namespace" | "name">;

/** The hand-over entry that carries a record (contract 1.5). */
const HANDED_RECORD = "record.json";

/** What every record of a remote object holds: whose it is, where it is, what was ordered. */
export interface RemoteRecord {
  readonly uid: string;
  /** The Cluster, `namespace/name`. */
  readonly cluster: string;
  readonly providerConfig: string;
  /** The object's namespace on the remote API server. */
  readonly namespace: string;
  /** The version ordered, reported while the remote API server cannot be asked. */
  readonly version: string;
  /** Set once deletion was ordered: the record goes when the object is seen gone. */
  readonly deleting?: boolean;
}

/** A remote object, as far as the recipe reads it. */
export interface RemoteObject {
  readonly metadata: ObjectMeta & { readonly name: string };
}

/** A remote API server: clients for it, and how its errors are worded. */
export interface RemoteApi {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** An error of a call while doing `what`, worded for a person (the remote side's own message when it answered). */
  error(what: string, error: unknown): Error;
}

/** The clients of the API server `kubeConfig` names. */
export function apiClients(kubeConfig: KubeConfig): Pick<RemoteApi, "custom" | "core"> {
  return { custom: kubeConfig.makeApiClient(CustomObjectsApi), core: kubeConfig.makeApiClient(CoreV1Api) };
}

/** What one backend's remote objects are: the configuration of the recipe. */
export interface RemoteObjectKind<O extends RemoteObject, R extends RemoteRecord, S, A extends RemoteApi>
  extends RemoteResource {
  /** How messages say it was made: `ordered`, `made`. */
  readonly made: string;
  /** The key of the object in log lines: `shoot`, `capiCluster`. */
  readonly logKey: string;
  /** The backend's settings in `target` (throws a message naming the ProviderConfig when they are wrong). */
  settings(target: ClusterTarget): S;
  /** The API server the settings name, and the namespace the object goes into there. */
  open(settings: S, providerConfig: string): Promise<{ readonly api: A; readonly namespace: string }>;
  /** The API server a record names (`providerConfig` for messages). */
  reopen(record: R, providerConfig: string): Promise<A>;
  /** The record for `target`'s object `name` in `namespace`, ordered at `version`. */
  record(target: ClusterTarget, settings: S, namespace: string, name: string, version: string): R;
  /** Where the Cluster's object is when no record says (a lost state file); undefined when that cannot be known. */
  derivedRecord?(target: ClusterTarget): R | undefined;
  /** The object's name in a record. */
  nameOf(record: R): string;
  /** The object the engine wants for `target` at `version`. */
  desired(target: ClusterTarget, settings: S, namespace: string, version: string): O;
  /** The Kubernetes version the stored object asks for (`X.Y.Z`), if it says. */
  runningVersion(stored: O): string | undefined;
  /** The merge patch that brings `stored` to `desired`, or undefined; throws when that would downgrade. */
  changes(stored: O, desired: O): JsonObject | undefined;
  /** The changed fields, for the log line of an update. */
  changedFields(changes: JsonObject): string[];
  /**
   * Whether `stored` serves the Cluster `target` (its uid, and its namespace and name for objects another
   * provider made for it, which the engine takes over).
   */
  ownedBy(stored: O, target: OwnerOf): boolean;
  /**
   * An object another provider made for `target` under a name of its own (e.g. openMCP's Gardener provider's
   * Shoot), found when there is none under the engine's name: the engine takes it over as it runs. Optional.
   */
  takenOver?(api: A, namespace: string, target: ClusterTarget): Promise<O | undefined>;
  /** Why `target` cannot use `stored`, which another Cluster (or someone else) made. */
  conflict(stored: O, target: ClusterTarget): Error;
  /** What `stored` says about the cluster; `outOfDate` tells whether an update would change it (see the recipe). */
  observation(stored: O, record: R, target: ClusterTarget, outOfDate: OutOfDate): ClusterObservation;
  /** A create refused with `code` worded for a person; undefined for the API server's own wording. */
  refusedCreate?(code: number, namespace: string, name: string, api: A): Error | undefined;
  /**
   * What goes before a deletion (e.g. Gardener's deletion confirmation), done through `patch`: unguarded, since it
   * only adds what overwrites nothing read, and the remote side's controllers write the object at any moment (a
   * guarded patch was refused 409 and failed the deletion).
   */
  beforeDelete?(stored: O, patch: (changes: JsonObject) => Promise<O>): Promise<void>;
  /** Log fields of a create beside the Cluster, the object and the version. */
  createdFields?(settings: S): Record<string, string>;
}

/**
 * Whether the stored object differs from what the Cluster and its ProviderConfig ask now at the version it runs,
 * so that an update would change it; `onProblem` hears why that cannot be said (the desired object cannot be made).
 */
export type OutOfDate = (onProblem?: (error: unknown) => void) => boolean;

/** Where a Cluster's object is and that it is ready, for what a backend hands out of a ready cluster. */
export interface ReadyObject<R, A> {
  readonly record: R;
  readonly api: A;
}

/** The recipe, configured by one {@link RemoteObjectKind}. */
export class RemoteObjects<O extends RemoteObject, R extends RemoteRecord, S, A extends RemoteApi> {
  readonly #kind: RemoteObjectKind<O, R, S, A>;
  readonly #records: RecordFile<R>;
  readonly #log: Logger;
  /** The last patch sent per Cluster uid, and the object generation it led to (`warned`: said once that it stays). */
  readonly #lastPatches = new Map<string, SentPatch & { readonly warned?: boolean }>();

  constructor(kind: RemoteObjectKind<O, R, S, A>, records: RecordFile<R>, log: Logger) {
    this.#kind = kind;
    this.#records = records;
    this.#log = log;
  }

  /** How many objects were ordered and not yet seen gone. */
  get count(): number {
    return this.#records.size;
  }

  /**
   * The Cluster's record as hand-over entries (contract 1.5 `exportCluster`): where its object is and what was
   * ordered, for the engine it moves to; none when nothing was ordered (that engine then finds the object by name).
   */
  exportRecord(target: ClusterTarget): Record<string, string> {
    const record = this.#records.get(target.uid);
    return record ? { [HANDED_RECORD]: JSON.stringify(record) } : {};
  }

  /** Takes over a record {@link exportRecord} gave (contract 1.5 `importCluster`); one this instance holds stays. */
  importRecord(target: ClusterTarget, state: Readonly<Record<string, string>>): void {
    const text = state[HANDED_RECORD];
    if (text === undefined || this.#records.has(target.uid)) return;
    const record = JSON.parse(text) as R;
    if (record.uid !== target.uid)
      throw new Error(
        `the ${this.#kind.noun} record handed over is of another Cluster (uid ${record.uid}) than ${target.namespace}/${target.name} (uid ${target.uid})`,
      );
    this.#records.put(record);
  }

  /** Where the Cluster's object is: its record, else where it would be (see {@link RemoteObjectKind.derivedRecord}). */
  place(target: ClusterTarget): R | undefined {
    return this.#records.get(target.uid) ?? this.#kind.derivedRecord?.(target);
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const kind = this.#kind;
    const place = this.place(target);
    if (!place) return { exists: false };
    let stored: O | undefined;
    try {
      const api = await kind.reopen(place, place.providerConfig);
      stored = await this.#read(api, place.namespace, kind.nameOf(place));
    } catch (error) {
      if (!this.#records.has(target.uid)) return { exists: false }; // nothing ordered that we know of
      const phase: BackendPhase = place.deleting ? "deleting" : "provisioning";
      return { exists: true, phase, version: place.version, message: (error as Error).message };
    }
    if (!stored || !kind.ownedBy(stored, target)) {
      if (place.deleting) this.#forget(target.uid); // bookkeeping only: the object is gone for good
      return { exists: false };
    }
    const object = stored;
    return kind.observation(object, place, target, (onProblem) =>
      this.#outOfDate(target, place, object, onProblem),
    );
  }

  /**
   * Whether `stored` differs from what is wanted now at the version it runs. Not when the very patch was applied
   * already and the remote side has taken it in (its generation moved on) yet the difference stays: then someone
   * changes it back, and patching again would only loop (said once in the log).
   */
  #outOfDate(target: ClusterTarget, record: R, stored: O, onProblem?: (error: unknown) => void): boolean {
    const kind = this.#kind;
    let changes: JsonObject | undefined;
    try {
      const version = kind.runningVersion(stored) ?? record.version;
      changes = kind.changes(stored, kind.desired(target, kind.settings(target), record.namespace, version));
    } catch (error) {
      onProblem?.(error); // e.g. the ProviderConfig is gone, or nothing an update could do
      return false;
    }
    if (!changes) return false;
    const last = this.#lastPatches.get(target.uid);
    if (patchWorthSending(changes, last, stored.metadata.generation ?? 0)) return true;
    if (last && !last.warned) {
      this.#lastPatches.set(target.uid, { ...last, warned: true });
      this.#log.warn(
        `${kind.noun} keeps differing from what is wanted after it was patched; not patching again`,
        {
          [kind.logKey]: `${stored.metadata.namespace}/${stored.metadata.name}`,
          fields: kind.changedFields(changes).join(","),
        },
      );
    }
    return false;
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    const kind = this.#kind;
    const settings = kind.settings(target);
    const { api, namespace } = await kind.open(settings, target.providerConfig);
    const desired = kind.desired(target, settings, namespace, version);
    let name = desired.metadata.name;
    let existing = await this.#read(api, namespace, name);
    const predecessor = existing ? undefined : await kind.takenOver?.(api, namespace, target);
    if (predecessor) {
      existing = predecessor;
      name = predecessor.metadata.name ?? name;
      this.#log.info(`${kind.noun} taken over: another provider made it for this Cluster`, {
        cluster: `${target.namespace}/${target.name}`,
        [kind.logKey]: `${namespace}/${name}`,
      });
    }
    if (existing && !kind.ownedBy(existing, target)) throw kind.conflict(existing, target);
    // Recorded before the object is ordered: an engine killed in between finds it on restart (same name).
    this.#records.put(kind.record(target, settings, namespace, name, version));
    if (existing) {
      // It keeps its version here: changing versions is update's job, and never downwards.
      const running = kind.runningVersion(existing) ?? version;
      return this.#bringInLine(api, target, existing, kind.desired(target, settings, namespace, running));
    }
    try {
      await api.custom.createNamespacedCustomObject({ ...kind.resource, namespace, body: desired });
      this.#log.info(`${kind.noun} created`, {
        cluster: `${target.namespace}/${target.name}`,
        [kind.logKey]: `${namespace}/${name}`,
        ...kind.createdFields?.(settings),
        version,
      });
    } catch (error) {
      const code = apiStatusOf(error)?.code ?? 0;
      // Refused (validation, admission, a webhook): nothing was made, so there is nothing to remember.
      if (code >= 400 && code < 500 && code !== 409) this.#forget(target.uid);
      if (code !== 409)
        throw (
          kind.refusedCreate?.(code, namespace, name, api) ??
          api.error(`creating ${kind.noun} ${namespace}/${name}`, error)
        );
      const raced = await this.#read(api, namespace, name);
      if (raced && !kind.ownedBy(raced, target)) throw kind.conflict(raced, target);
    }
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const kind = this.#kind;
    const place = this.place(target);
    if (!place)
      throw new Error(`cannot update ${describeCluster(target)}: no ${kind.noun} was ${kind.made} for it`);
    const settings = kind.settings(target);
    const api = await kind.reopen(place, target.providerConfig);
    const name = kind.nameOf(place);
    const stored = await this.#read(api, place.namespace, name);
    if (!stored || !kind.ownedBy(stored, target))
      throw new Error(
        `cannot update ${describeCluster(target)}: ${kind.noun} ${place.namespace}/${name} is gone`,
      );
    await this.#bringInLine(api, target, stored, kind.desired(target, settings, place.namespace, version));
    const record = this.#records.get(target.uid);
    if (record) this.#records.put({ ...record, version });
  }

  /** Deletes the object; done once the remote side has removed it (observe then says it is gone). */
  async delete(target: ClusterTarget): Promise<void> {
    const kind = this.#kind;
    const place = this.place(target);
    if (!place) return;
    const name = kind.nameOf(place);
    const where = `${kind.noun} ${place.namespace}/${name}`;
    let api: A;
    try {
      api = await kind.reopen(place, place.providerConfig);
    } catch (error) {
      throw new Error(`cannot delete ${where}: ${(error as Error).message}`);
    }
    const stored = await this.#read(api, place.namespace, name);
    if (!stored || !kind.ownedBy(stored, target)) return this.#forget(target.uid);
    this.#records.put({ ...place, deleting: true });
    if (await this.orderDeletion(api, stored, { cluster: place.cluster })) this.#forget(target.uid);
  }

  /**
   * Orders the deletion of `stored` (what the kind does before, then the delete), unless it is ordered already; true
   * when it is gone already. `fields` go into the log line.
   */
  async orderDeletion(api: A, stored: O, fields: Record<string, string>): Promise<boolean> {
    const kind = this.#kind;
    const namespace = stored.metadata.namespace ?? "";
    const name = stored.metadata.name;
    try {
      await kind.beforeDelete?.(stored, (changes) => this.#patch(api, stored, changes, { guarded: false }));
      if (stored.metadata.deletionTimestamp) return false;
      await api.custom.deleteNamespacedCustomObject({ ...kind.resource, namespace, name });
      this.#log.info(`${kind.noun} deletion ordered`, { ...fields, [kind.logKey]: `${namespace}/${name}` });
      return false;
    } catch (error) {
      if (isNotFound(error)) return true;
      throw api.error(`deleting ${kind.noun} ${namespace}/${name}`, error);
    }
  }

  /**
   * The Cluster's object and its API server when the cluster is ready: by `observed`, what the runtime observed
   * moments ago, when given, else by observing now. Undefined while it is not.
   */
  async ready(target: ClusterTarget, observed?: ClusterObservation): Promise<ReadyObject<R, A> | undefined> {
    const record = this.place(target);
    if (!record) return undefined;
    const observation = observed ?? (await this.observe(target));
    if (!observation.exists || observation.phase !== "ready") return undefined;
    return { record, api: await this.#kind.reopen(record, record.providerConfig) };
  }

  /**
   * The stored object of a Cluster that has one (for what a backend does to it beyond the recipe), also where
   * only a derived place finds it (a lost state file).
   */
  async stored(target: ClusterTarget): Promise<(ReadyObject<R, A> & { readonly object: O }) | undefined> {
    const record = this.place(target);
    if (!record) return undefined;
    const api = await this.#kind.reopen(record, record.providerConfig);
    const object = await this.#read(api, record.namespace, this.#kind.nameOf(record));
    return object && this.#kind.ownedBy(object, target) ? { record, api, object } : undefined;
  }

  /** A JSON merge patch of exactly `changes` to `stored`, guarded by the resourceVersion read. */
  patch(api: A, stored: O, changes: JsonObject): Promise<O> {
    return this.#patch(api, stored, changes);
  }

  async #bringInLine(api: A, target: ClusterTarget, stored: O, desired: O): Promise<void> {
    const changes = this.#kind.changes(stored, desired);
    if (!changes) return;
    const patched = await this.#patch(api, stored, changes);
    this.#lastPatches.set(target.uid, {
      changes: JSON.stringify(changes),
      generation: patched.metadata.generation ?? 0,
    });
    this.#log.info(`${this.#kind.noun} updated`, {
      [this.#kind.logKey]: `${stored.metadata.namespace}/${stored.metadata.name}`,
      fields: this.#kind.changedFields(changes).join(","),
    });
  }

  #patch(api: A, stored: O, changes: JsonObject, options?: { readonly guarded?: boolean }): Promise<O> {
    return patchObject(api, this.#kind, stored, changes, options);
  }

  #read(api: A, namespace: string, name: string): Promise<O | undefined> {
    return readObject(api, this.#kind, namespace, name);
  }

  #forget(uid: string): void {
    this.#lastPatches.delete(uid);
    this.#records.remove(uid);
  }
}

/** Which objects, as the custom objects API and messages name them. */
export interface RemoteResource {
  /** The object as messages and logs name it: `Shoot`, `CAPI Cluster`. */
  readonly noun: string;
  readonly resource: { readonly group: string; readonly version: string; readonly plural: string };
}

/** The object `namespace/name` of `kind`; undefined when it does not exist. */
export async function readObject<O>(
  api: RemoteApi,
  kind: RemoteResource,
  namespace: string,
  name: string,
): Promise<O | undefined> {
  try {
    return (await api.custom.getNamespacedCustomObject({ ...kind.resource, namespace, name })) as O;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw api.error(`reading ${kind.noun} ${namespace}/${name}`, error);
  }
}

/** A guarded patch refused because the object changed since it was read (a status write counts): read it again. */
export class ChangedMeanwhileError extends Error {
  override readonly name = "ChangedMeanwhileError";
}

/**
 * Runs `write` (which reads the object and patches it, guarded) again with a fresh read while the object changed
 * meanwhile, up to `attempts` times: for a command that must succeed when it can (hibernate, wake) on an object
 * whose status its controllers keep writing.
 */
export async function againWhileChanged<T>(write: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof ChangedMeanwhileError) || attempt >= attempts) throw error;
    }
  }
}

/**
 * A JSON merge patch of exactly `changes` to `stored`, guarded by the resourceVersion read (unless `guarded` is
 * false): refused whole when the object changed meanwhile.
 */
export async function patchObject<O extends RemoteObject>(
  api: RemoteApi,
  kind: RemoteResource,
  stored: O,
  changes: JsonObject,
  { guarded = true }: { readonly guarded?: boolean } = {},
): Promise<O> {
  const namespace = stored.metadata.namespace ?? "";
  const name = stored.metadata.name;
  const metadata = {
    ...((changes.metadata as JsonObject | undefined) ?? {}),
    ...(guarded ? { resourceVersion: stored.metadata.resourceVersion ?? null } : {}),
  };
  try {
    return (await api.custom.patchNamespacedCustomObject(
      { ...kind.resource, namespace, name, body: { ...changes, metadata } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )) as O;
  } catch (error) {
    // The engine calls again, with what it reads then.
    if (isConflict(error))
      throw new ChangedMeanwhileError(`${kind.noun} ${namespace}/${name} changed meanwhile; trying again`);
    throw api.error(`updating ${kind.noun} ${namespace}/${name}`, error);
  }
}
