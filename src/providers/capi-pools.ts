/**
 * Warm pools of the `capi` backend (contract 1.5). A member is a CAPI Cluster made for the member's target and marked
 * with its pool; binding relabels it as the Cluster's own (see `capi-pool-members.ts`), so the binding lives on the
 * CAPI Cluster: a restarted engine, one on an empty state folder and the engine a Cluster moved to all find it by its
 * labels. The state folder only remembers where things are: the records (`capi.json`), and the places (management
 * cluster and namespace) ProviderConfigs put CAPI Clusters in, with the pools found there (`capi-pools.json`).
 *
 * Every step is one write the API server takes whole (a create, a JSON patch under a test, a delete), and a record is
 * written before the object it leads to: a kill -9 between any two leaves what the next call finds and finishes.
 */
import { readFileSync } from "node:fs";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { ClusterTarget } from "../api/backend.ts";
import type { PoolMemberObservation, PoolMemberSpec, PoolSupport } from "../api/backend-contract.ts";
import type { Clock } from "../api/clock.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import { apiStatusOf, isNotFound } from "../api/error-message.ts";
import type { Logger } from "../api/logger.ts";
import { writeFileAtomicallySync } from "../util/atomic-file.ts";
import {
  bindingOperations,
  boundMemberSelector,
  capiPoolMember,
  POOL_MEMBER_SELECTOR,
  poolMemberClusterName,
} from "./capi-pool-members.ts";
import {
  CAPI_CLUSTERS,
  type CapiPlace,
  type CapiRecord,
  type Management,
  placeKey,
  placeOf,
  placeOfRecord,
  recordOf,
} from "./capi-records.ts";
import { type CapiSettings, capiSettings } from "./capi-settings.ts";
import {
  type CapiTarget,
  engineVersion,
  ownedBy,
  type TopologyCluster,
  topologyObservation,
} from "./capi-topology.ts";
import type { KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import type { RecordFile } from "./shared/record-file.ts";
import type { RemoteObjects } from "./shared/remote-object.ts";

/** What the pools use of the backend. */
export interface CapiPoolParts {
  readonly records: RecordFile<CapiRecord>;
  readonly clusters: RemoteObjects<TopologyCluster, CapiRecord, CapiSettings, Management>;
  management(ref: KubeconfigSecretRef | undefined, providerConfig: string): Promise<Management>;
  /** Where the places are kept (`capi-pools.json` in the state folder). */
  readonly placesFile: string;
  readonly clock: Clock;
  readonly log: Logger;
}

/** A place as kept in the places file: and the pools whose members were made or found there. */
interface KnownPlace extends CapiPlace {
  readonly pools: readonly string[];
}

/** A member's CAPI Cluster found, and where. */
interface FoundMember {
  readonly place: CapiPlace;
  readonly api: Management;
  readonly cluster: TopologyCluster;
}

/** See the file's summary. */
export class CapiPools implements PoolSupport {
  readonly #parts: CapiPoolParts;
  readonly #places = new Map<string, KnownPlace>();

  constructor(parts: CapiPoolParts) {
    this.#parts = parts;
    let text: string | undefined;
    try {
      text = readFileSync(parts.placesFile, "utf8");
    } catch {
      // nothing learnt yet
    }
    const places = text === undefined ? [] : (JSON.parse(text) as { places?: KnownPlace[] }).places;
    for (const place of places ?? []) this.#places.set(placeKey(place), place);
  }

  /** Remembers a place CAPI Clusters go to (read with a ProviderConfig's offer), and that `pool` has members there. */
  learn(place: CapiPlace, pool?: string): void {
    const key = placeKey(place);
    const known = this.#places.get(key);
    const pools = [...new Set([...(known?.pools ?? []), ...(pool === undefined ? [] : [pool])])].sort();
    const next: KnownPlace = { ...place, pools };
    if (known && JSON.stringify(known) === JSON.stringify(next)) return;
    this.#places.set(key, next);
    writeFileAtomicallySync(
      this.#parts.placesFile,
      JSON.stringify({ places: [...this.#places.values()] }, null, 2),
    );
  }

  /** The member's CAPI Cluster, marked as one of its pool from the start: a crash never leaves an unmarked one. */
  async createMember(member: PoolMemberSpec, target: ClusterTarget): Promise<void> {
    const memberTarget: CapiTarget = {
      ...poolMemberTarget(member.id, {
        name: target.providerConfig,
        ...(target.settings ? { settings: target.settings } : {}),
      }),
      poolMember: member,
    };
    this.learn(
      placeOf(capiSettings(target.settings, target.providerConfig), target.providerConfig),
      member.pool,
    );
    await this.#parts.clusters.create(memberTarget, member.version);
  }

  /**
   * The CAPI Clusters marked as members of `pool` in every place known (those being deleted left out). A place known to
   * hold the pool that cannot be read fails the call (never a member left out unseen); others are passed over.
   */
  async listMembers(pool: string): Promise<PoolMemberObservation[]> {
    const places = this.#placesToSearch((record) => record.poolMember?.pool === pool, pool);
    if (places.length === 0)
      throw new Error(
        `capi backend: no ProviderConfig read yet says where the CAPI Clusters of pool ${pool} are; listing again once one is`,
      );
    const members = new Map<string, PoolMemberObservation>();
    for (const { place, ofPool } of places) {
      let clusters: TopologyCluster[];
      try {
        clusters = await this.#list(place, POOL_MEMBER_SELECTOR);
      } catch (error) {
        if (ofPool) throw error;
        this.#parts.log.debug("cannot look for pool members here", {
          namespace: place.namespace,
          providerConfig: place.providerConfig,
          error: (error as Error).message,
        });
        continue;
      }
      const ofThisPool = clusters.filter((cluster) => capiPoolMember(cluster)?.pool === pool);
      if (ofThisPool.length > 0) this.learn(place, pool);
      this.#forgetGone(pool, place, ofThisPool);
      for (const cluster of ofThisPool) {
        const member = capiPoolMember(cluster);
        if (!member || cluster.metadata.deletionTimestamp) continue;
        const observation = topologyObservation(cluster, {
          now: this.#parts.clock.now(),
          deletionTimeoutMs: place.deletionTimeoutMs,
        });
        members.set(member.id, { ...member, observation });
      }
    }
    return [...members.values()];
  }

  /** Relabels member `id` as the Cluster's own (one JSON patch under a test), its record first. */
  async bind(id: string, target: ClusterTarget): Promise<void> {
    const hint = placeOf(capiSettings(target.settings, target.providerConfig), target.providerConfig);
    const found = await this.#find(id, hint);
    if (!found)
      throw new Error(
        `capi backend: no pool member ${id} (no CAPI Cluster ${hint.namespace}/${poolMemberClusterName(id)} marked as one)`,
      );
    const { api, place, cluster } = found;
    const namespace = cluster.metadata.namespace ?? place.namespace;
    const name = cluster.metadata.name;
    const operations = bindingOperations(cluster, id, target);
    const pool = capiPoolMember(cluster)?.pool ?? "";
    const version = engineVersion(cluster.spec.topology?.version ?? "");
    // The record first: the Cluster's uid leads to the member's CAPI Cluster however far the patch got.
    this.#parts.records.put(recordOf(target, place, name, version, { id, pool }));
    if (operations.length > 0) {
      try {
        await api.custom.patchNamespacedCustomObject(
          { ...CAPI_CLUSTERS, namespace, name, body: operations },
          setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
        );
      } catch (error) {
        // Refused (its test failed, or it went): say what it is now, unless it is bound to this Cluster after all.
        const now = await this.#read(api, namespace, name);
        if (!now)
          throw new Error(`capi backend: pool member ${id} (CAPI Cluster ${namespace}/${name}) is gone`);
        if (bindingOperations(now, id, target).length > 0)
          throw api.error(`binding pool member ${id} (CAPI Cluster ${namespace}/${name})`, error);
      }
      this.#parts.log.info("pool member bound", {
        cluster: `${target.namespace}/${target.name}`,
        member: id,
        capiCluster: `${namespace}/${name}`,
      });
    }
    this.#parts.records.remove(id); // the idle member's record
  }

  /** Orders the deletion of member `id`'s CAPI Cluster (bound or not), then forgets its records. */
  async deleteMember(id: string): Promise<void> {
    const found = await this.#find(id);
    if (found && !found.cluster.metadata.deletionTimestamp) {
      const { api, cluster } = found;
      const namespace = cluster.metadata.namespace ?? found.place.namespace;
      const name = cluster.metadata.name;
      try {
        await api.custom.deleteNamespacedCustomObject({ ...CAPI_CLUSTERS, namespace, name });
        this.#parts.log.info("pool member deletion ordered", {
          member: id,
          capiCluster: `${namespace}/${name}`,
        });
      } catch (error) {
        if (!isNotFound(error)) throw api.error(`deleting CAPI Cluster ${namespace}/${name}`, error);
      }
    }
    for (const record of this.#parts.records.values())
      if (record.poolMember?.id === id) this.#parts.records.remove(record.uid);
  }

  /**
   * The record that leads `target.uid` to its CAPI Cluster: the one kept, else (an empty or lost state folder) one
   * written now for a pool member found bound to it by its labels. Undefined when neither is.
   */
  async resolve(target: ClusterTarget): Promise<CapiRecord | undefined> {
    const known = this.#parts.records.get(target.uid);
    if (known) return known;
    let settings: CapiSettings;
    try {
      settings = capiSettings(target.settings, target.providerConfig);
    } catch {
      return undefined; // the backend's own call says what is wrong with them
    }
    const place = placeOf(settings, target.providerConfig);
    // Not allowed to list there: no pool can be kept there, so none was bound.
    const [bound] = await this.#list(place, boundMemberSelector(target.uid), { forbiddenIsNone: true });
    const member = bound && capiPoolMember(bound);
    if (!bound || !member) return undefined;
    const record = {
      ...recordOf(target, place, bound.metadata.name, engineVersion(bound.spec.topology?.version ?? ""), {
        id: member.id,
        pool: member.pool,
      }),
      ...(bound.metadata.deletionTimestamp ? { deleting: true } : {}),
    };
    this.#parts.records.put(record);
    return record;
  }

  /**
   * Whether `target` is served by a pool member: its record names one (see {@link resolve}) whose CAPI Cluster carries
   * its uid. A record that leads nowhere (a bind cut short whose member then went) is forgotten: the Cluster is made
   * as usual.
   */
  async servedByMember(target: ClusterTarget): Promise<boolean> {
    const record = await this.resolve(target);
    if (!record?.poolMember || record.poolMember.id === target.uid) return false;
    const api = await this.#parts.management(record.management, record.providerConfig);
    const cluster = await this.#read(api, record.namespace, record.name);
    if (cluster && ownedBy(cluster, target)) return true;
    this.#parts.records.remove(target.uid);
    return false;
  }

  /** The places to look in: each with whether it is known to hold what is looked for (`ofRecord`, `pool`). */
  #placesToSearch(
    ofRecord: (record: CapiRecord) => boolean,
    pool?: string,
  ): { readonly place: CapiPlace; readonly ofPool: boolean }[] {
    const places = new Map<string, { place: CapiPlace; ofPool: boolean }>();
    const add = (place: CapiPlace, ofPool: boolean) => {
      const key = placeKey(place);
      places.set(key, {
        place: places.get(key)?.place ?? place,
        ofPool: ofPool || !!places.get(key)?.ofPool,
      });
    };
    for (const record of this.#parts.records.values()) add(placeOfRecord(record), ofRecord(record));
    for (const place of this.#places.values()) add(place, pool !== undefined && place.pools.includes(pool));
    return [...places.values()];
  }

  /** Member `id`'s CAPI Cluster: where a record or `hint` says first, then in every place known. */
  async #find(id: string, hint?: CapiPlace): Promise<FoundMember | undefined> {
    const ofMember = (record: CapiRecord) => record.poolMember?.id === id;
    const first = [
      ...this.#parts.records.values().filter(ofMember).map(placeOfRecord),
      ...(hint ? [hint] : []),
    ];
    const firstKeys = new Set(first.map(placeKey));
    const rest = this.#placesToSearch(ofMember)
      .map(({ place }) => place)
      .filter((place) => !firstKeys.has(placeKey(place)));
    const name = poolMemberClusterName(id);
    for (const place of [...first, ...rest]) {
      let api: Management;
      let cluster: TopologyCluster | undefined;
      try {
        api = await this.#parts.management(place.management, place.providerConfig);
        cluster = await this.#read(api, place.namespace, name);
      } catch (error) {
        if (firstKeys.has(placeKey(place))) throw error;
        continue; // a place it was never known to be in
      }
      if (cluster && capiPoolMember(cluster)?.id === id) return { place, api, cluster };
    }
    return undefined;
  }

  /**
   * Forgets the records of `pool`'s idle members at `place` whose CAPI Cluster is not among `listed` any more, or is
   * bound by now (a bind cut short before it forgot the idle record).
   */
  #forgetGone(pool: string, place: CapiPlace, listed: readonly TopologyCluster[]): void {
    const byName = new Map(listed.map((cluster) => [cluster.metadata.name, capiPoolMember(cluster)]));
    const key = placeKey(place);
    for (const record of this.#parts.records.values()) {
      const member = record.poolMember;
      if (member?.pool !== pool || member.id !== record.uid || placeKey(placeOfRecord(record)) !== key)
        continue;
      const listedMember = byName.get(record.name);
      if (!listedMember || listedMember.boundTo !== undefined) this.#parts.records.remove(record.uid);
    }
  }

  async #list(
    place: CapiPlace,
    labelSelector: string,
    { forbiddenIsNone = false }: { readonly forbiddenIsNone?: boolean } = {},
  ): Promise<TopologyCluster[]> {
    const api = await this.#parts.management(place.management, place.providerConfig);
    try {
      const list = (await api.custom.listNamespacedCustomObject({
        ...CAPI_CLUSTERS,
        namespace: place.namespace,
        labelSelector,
      })) as { items: TopologyCluster[] };
      return list.items;
    } catch (error) {
      if (forbiddenIsNone && apiStatusOf(error)?.code === 403) return [];
      throw api.error(`listing CAPI Clusters in namespace ${place.namespace}`, error);
    }
  }

  async #read(api: Management, namespace: string, name: string): Promise<TopologyCluster | undefined> {
    try {
      return (await api.custom.getNamespacedCustomObject({
        ...CAPI_CLUSTERS,
        namespace,
        name,
      })) as TopologyCluster;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw api.error(`reading CAPI Cluster ${namespace}/${name}`, error);
    }
  }
}
