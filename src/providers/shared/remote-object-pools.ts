/**
 * One warm-pool recipe (contract 1.5) for backends whose clusters are objects on a remote API server that cannot be
 * renamed (a Gardener Shoot, a Cluster API Cluster: see `remote-object.ts`). A member is such an object made for the
 * member's id and marked with its pool from its creation on, so a crash never leaves an unmarked one. A backend gives
 * a {@link RemotePoolKind}: where it looks, how it lists and reads members, how it marks one bound; it keeps only that.
 *
 * The binding has ONE record: the member's object itself (what {@link RemotePoolKind.member} reads as `boundTo`, an
 * annotation or a label), so an engine on an empty state folder, or the one a Cluster moved to, finds it. The
 * backend's record file only caches where objects are: each of its entries can be found again from the objects.
 *
 * Bind, in ONE order:
 * 1. read the member's object; refuse it when it is bound to another Cluster, or being deleted;
 * 2. claim it: one write the API server takes whole, guarded so that it is refused when the object changed since it
 *    was read (skipped when it is bound to this Cluster already). This write IS the binding;
 * 3. cache the Cluster's record (its uid leads to the member's object);
 * 4. drop the idle member's record.
 *
 * Why that is crash-safe: before 2 nothing is bound, and a retry starts over; from 2 on every call for the Cluster
 * finds the object by its mark ({@link RemoteObjectPools.resolve}), and a retried bind skips 2 and writes 3 and 4
 * again (each idempotent); an idle record that a crash before 4 left goes with the next listing, bind or deletion.
 * A record so never leads to a member not claimed for its uid; one that an older engine wrote before its claim is
 * dropped by {@link RemoteObjectPools.servedByMember}. Every other method is idempotent too.
 */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { PoolMemberObservation, PoolMemberSpec, PoolSupport } from "../../api/backend-contract.ts";
import { poolMemberTarget } from "../../api/cluster-pool.ts";
import type { Logger } from "../../api/logger.ts";
import type { RecordFile } from "./record-file.ts";
import type { RemoteApi, RemoteObject, RemoteRecord } from "./remote-object.ts";

/** A pool member as its object says, with the Cluster uid it is bound to (absent while it is idle). */
export interface RemotePoolMember extends PoolMemberSpec {
  readonly boundTo?: string;
}

/** A member's own target, carrying what it is: its object is marked from its creation on. */
export type PoolMemberTarget = ClusterTarget & { readonly poolMember: PoolMemberSpec };

/** Where objects are: a namespace on an API server, and the ProviderConfig that put them there (for messages). */
export interface PoolPlace {
  readonly namespace: string;
  readonly providerConfig: string;
}

/** A place to look in, and whether what is looked for is known to be there: then an error there fails the call. */
export interface SearchPlace<P> {
  readonly place: P;
  readonly known: boolean;
}

/** The records the recipe keeps (a backend's {@link RecordFile}). */
export type PoolRecords<R extends RemoteRecord> = Pick<
  RecordFile<R>,
  "get" | "has" | "values" | "put" | "remove"
>;

/** Whom a record is for: the Cluster (or, for an idle member, the member's own target). */
export type RecordOwner = Pick<ClusterTarget, "uid" | "namespace" | "name" | "providerConfig">;

/** What one backend's pools are: the configuration of the recipe. */
export interface RemotePoolKind<
  O extends RemoteObject,
  R extends RemoteRecord,
  P extends PoolPlace,
  A extends RemoteApi,
> {
  /** The backend's name, for messages. */
  readonly backend: string;
  /** The object as messages name it: `Shoot`, `CAPI Cluster`. */
  readonly noun: string;
  /** The name of member `id`'s object: derived from the id alone, whatever it was bound to since. */
  memberName(id: string): string;
  /** The member `object` is, with the Cluster uid it is bound to; undefined when it is none. */
  member(object: O): RemotePoolMember | undefined;
  /** The Cluster (`namespace/name`) a bound member's object names, for messages. */
  boundCluster(object: O): string;
  /**
   * The claim: ONE write the API server takes whole, marking `object` bound to `target` (what {@link member} reads
   * as `boundTo` from then on), refused when the object changed since it was read.
   */
  claim(api: A, object: O, target: ClusterTarget): Promise<void>;
  /** The member a record is of: the member's own record (its uid the member id), or a Cluster's bound to it. */
  recordMember(record: R): Pick<PoolMemberSpec, "id" | "pool"> | undefined;
  /** The record of `object` at `place` for `owner`, saying which member it is (if it is one). */
  record(owner: RecordOwner, place: P, object: O, member: RemotePoolMember | undefined): R;
  placeOfRecord(record: R): P;
  /** One key per place (two ProviderConfigs may name one). */
  placeKey(place: P): string;
  /**
   * Where `target`'s settings put objects; undefined when they are wrong or name a place that does not exist (the
   * backend's own calls say why). Throws when the remote side cannot be asked.
   */
  placeOf(target: ClusterTarget): Promise<P | undefined>;
  /** Where to look, given `recorded` (the places the records name): those, and others it knows, for `pool` if given. */
  places(recorded: readonly SearchPlace<P>[], pool?: string): readonly SearchPlace<P>[];
  /** Why `doing` cannot be done yet: no place to look in is known. */
  nowhere(doing: string): Error;
  open(place: P): Promise<A>;
  read(api: A, place: P, name: string): Promise<O | undefined>;
  /** The objects of pool members at `place` (others among them are passed over). */
  list(api: A, place: P): Promise<O[]>;
  /** The object at `place` that serves `target`: a member bound to it (or whatever else the backend finds so). */
  serving(api: A, place: P, target: ClusterTarget): Promise<O | undefined>;
  /** What `object` says about its cluster, as the backend's `observe` would. */
  observation(object: O, place: P): ClusterObservation;
  /** Makes a member's object (the backend's create of the member's target). */
  create(target: PoolMemberTarget, version: string): Promise<void>;
  /** Orders member `id`'s `object` deleted (nothing when that is ordered already, or it is gone). */
  delete(api: A, object: O, id: string): Promise<void>;
  /** Remembers that `pool` has members at `place` (optional). */
  learn?(place: P, pool: string): void;
}

/** A member's object found, and where. */
interface Found<O, P, A> {
  readonly place: P;
  readonly api: A;
  readonly object: O;
  readonly member: RemotePoolMember;
}

/** The recipe, configured by one {@link RemotePoolKind}. */
export class RemoteObjectPools<
  O extends RemoteObject,
  R extends RemoteRecord,
  P extends PoolPlace,
  A extends RemoteApi,
> implements PoolSupport
{
  readonly #kind: RemotePoolKind<O, R, P, A>;
  readonly #records: PoolRecords<R>;
  readonly #log: Logger;

  constructor(kind: RemotePoolKind<O, R, P, A>, records: PoolRecords<R>, log: Logger) {
    this.#kind = kind;
    this.#records = records;
    this.#log = log;
  }

  async createMember(member: PoolMemberSpec, target: ClusterTarget): Promise<void> {
    const kind = this.#kind;
    const config = { name: target.providerConfig, ...(target.settings ? { settings: target.settings } : {}) };
    if (kind.learn) {
      const place = await kind.placeOf(target);
      if (place) kind.learn(place, member.pool);
    }
    await kind.create({ ...poolMemberTarget(member.id, config), poolMember: member }, member.version);
  }

  /**
   * The members of `pool` in every place to look in (those being deleted left out). A place known to hold the pool
   * that cannot be read fails the call (never a member left out unseen); others are passed over.
   */
  async listMembers(pool: string): Promise<PoolMemberObservation[]> {
    const kind = this.#kind;
    const places = this.#search((record) => kind.recordMember(record)?.pool === pool, pool);
    if (places.length === 0) throw kind.nowhere(`list pool ${pool}`);
    const listed = new Map<string, PoolMemberObservation>();
    for (const { place, known } of places) {
      let objects: O[];
      try {
        objects = await kind.list(await kind.open(place), place);
      } catch (error) {
        if (known) throw error;
        this.#log.debug("cannot look for pool members here", {
          namespace: place.namespace,
          providerConfig: place.providerConfig,
          error: (error as Error).message,
        });
        continue;
      }
      const members = objects.flatMap((object) => {
        const member = kind.member(object);
        return member?.pool === pool ? [{ object, member }] : [];
      });
      if (members.length > 0) kind.learn?.(place, pool);
      this.#forgetGone(pool, place, members);
      for (const { object, member } of members) {
        if (object.metadata.deletionTimestamp) continue;
        if (member.boundTo === undefined && !this.#records.has(member.id))
          this.#records.put(
            kind.record(poolMemberTarget(member.id, { name: place.providerConfig }), place, object, member),
          );
        listed.set(member.id, { ...member, observation: kind.observation(object, place) });
      }
    }
    return [...listed.values()];
  }

  /** Claims member `id`'s object for the Cluster (one guarded write), then caches where it is: see the file's summary. */
  async bind(id: string, target: ClusterTarget): Promise<void> {
    const kind = this.#kind;
    const hint = await kind.placeOf(target);
    const found = await this.#find(id, hint);
    if (!found)
      throw new Error(
        `${kind.backend} backend: no pool member ${id} (no ${kind.noun} ${hint ? `${hint.namespace}/` : ""}${kind.memberName(id)} marked as one)`,
      );
    const { api, place, object, member } = found;
    const where = `${kind.noun} ${place.namespace}/${object.metadata.name}`;
    const taker = `Cluster ${target.namespace}/${target.name}`;
    if (member.boundTo !== undefined && member.boundTo !== target.uid)
      throw new Error(
        `${kind.backend} backend: pool member ${id} (${where}) serves Cluster ${kind.boundCluster(object)} (uid ${member.boundTo}); ${taker} cannot take it`,
      );
    if (member.boundTo === undefined) {
      if (object.metadata.deletionTimestamp)
        throw new Error(
          `${kind.backend} backend: pool member ${id} (${where}) is being deleted; ${taker} cannot take it`,
        );
      try {
        await kind.claim(api, object, target);
      } catch (error) {
        // Refused (changed meanwhile, or gone): fine only when it is bound to this Cluster after all.
        const now = await kind.read(api, place, object.metadata.name);
        if (!now) throw new Error(`${kind.backend} backend: pool member ${id} (${where}) is gone`);
        if (kind.member(now)?.boundTo !== target.uid) throw error;
      }
      this.#log.info("pool member bound", {
        cluster: `${target.namespace}/${target.name}`,
        member: id,
        object: `${place.namespace}/${object.metadata.name}`,
      });
    }
    this.#recordServing(target, { ...place, providerConfig: target.providerConfig }, object);
    if (id !== target.uid) this.#records.remove(id); // the idle member's record
  }

  /** Orders the deletion of member `id`'s object (bound or not), then forgets every record of it. */
  async deleteMember(id: string): Promise<void> {
    const found = await this.#find(id);
    if (found) await this.#kind.delete(found.api, found.object, id);
    for (const record of this.#records.values())
      if (this.#kind.recordMember(record)?.id === id) this.#records.remove(record.uid);
  }

  /**
   * The record that leads `target.uid` to its object: the one kept, else (an empty or lost state folder) one written
   * now for the object found serving it where its settings say. Undefined when neither is.
   */
  async resolve(target: ClusterTarget): Promise<R | undefined> {
    const known = this.#records.get(target.uid);
    if (known) return known;
    const place = await this.#kind.placeOf(target);
    if (!place) return undefined;
    const object = await this.#kind.serving(await this.#kind.open(place), place, target);
    return object && this.#recordServing(target, place, object);
  }

  /**
   * Whether `target` is served by a pool member: its record (see {@link resolve}) names one whose object is bound to
   * its uid. A record that leads to none (one an older engine wrote before it claimed, whose member then went) is
   * forgotten: the Cluster is made as usual.
   */
  async servedByMember(target: ClusterTarget): Promise<boolean> {
    const kind = this.#kind;
    const record = await this.resolve(target);
    const member = record && kind.recordMember(record);
    if (!record || !member || member.id === target.uid) return false;
    const place = kind.placeOfRecord(record);
    const object = await kind.read(await kind.open(place), place, kind.memberName(member.id));
    if (object && kind.member(object)?.boundTo === target.uid) return true;
    this.#records.remove(target.uid);
    return false;
  }

  /** Records that `object` at `place` serves `target`. */
  #recordServing(target: ClusterTarget, place: P, object: O): R {
    const record = this.#kind.record(target, place, object, this.#kind.member(object));
    const recorded = object.metadata.deletionTimestamp ? { ...record, deleting: true } : record;
    this.#records.put(recorded);
    return recorded;
  }

  /** The places to look in for records `ofRecord` is true of (and for `pool`), each once. */
  #search(ofRecord: (record: R) => boolean, pool?: string): SearchPlace<P>[] {
    const kind = this.#kind;
    const recorded = this.#records
      .values()
      .map((record) => ({ place: kind.placeOfRecord(record), known: ofRecord(record) }));
    return distinct(kind.placeKey, kind.places(recorded, pool));
  }

  /** Member `id`'s object: where its records or `hint` say first (an error there fails the call), then elsewhere. */
  async #find(id: string, hint?: P): Promise<Found<O, P, A> | undefined> {
    const kind = this.#kind;
    const ofMember = (record: R) => kind.recordMember(record)?.id === id;
    const first = distinct(kind.placeKey, [
      ...this.#records
        .values()
        .filter(ofMember)
        .map((record) => ({ place: kind.placeOfRecord(record), known: true })),
      ...(hint ? [{ place: hint, known: true }] : []),
    ]);
    const firstKeys = new Set(first.map(({ place }) => kind.placeKey(place)));
    const rest = this.#search(ofMember).filter(({ place }) => !firstKeys.has(kind.placeKey(place)));
    if (first.length + rest.length === 0) throw kind.nowhere(`find pool member ${id}`);
    for (const { place, known } of [...first, ...rest]) {
      let api: A;
      let object: O | undefined;
      try {
        api = await kind.open(place);
        object = await kind.read(api, place, kind.memberName(id));
      } catch (error) {
        if (known) throw error;
        continue; // a place it was never known to be in
      }
      const member = object && kind.member(object);
      if (object && member?.id === id) return { place, api, object, member };
    }
    return undefined;
  }

  /**
   * Forgets the records of `pool`'s idle members at `place` whose object is not among `listed` any more, or is bound
   * by now (a bind cut short before it dropped the idle record).
   */
  #forgetGone(pool: string, place: P, listed: readonly { readonly member: RemotePoolMember }[]): void {
    const kind = this.#kind;
    const members = new Map(listed.map(({ member }) => [member.id, member]));
    const key = kind.placeKey(place);
    for (const record of this.#records.values()) {
      const member = kind.recordMember(record);
      if (
        member?.pool !== pool ||
        member.id !== record.uid ||
        kind.placeKey(kind.placeOfRecord(record)) !== key
      )
        continue;
      const listedMember = members.get(member.id);
      if (!listedMember || listedMember.boundTo !== undefined) this.#records.remove(record.uid);
    }
  }
}

/** Each place once (known where any says so), in the order first seen. */
function distinct<P>(placeKey: (place: P) => string, places: readonly SearchPlace<P>[]): SearchPlace<P>[] {
  const byKey = new Map<string, SearchPlace<P>>();
  for (const { place, known } of places) {
    const key = placeKey(place);
    const seen = byKey.get(key);
    byKey.set(key, { place: seen?.place ?? place, known: known || !!seen?.known });
  }
  return [...byKey.values()];
}
