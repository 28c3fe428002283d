/**
 * Warm pools of the `capi` backend (contract 1.5), as the remote-object pool recipe (`shared/remote-object-pools.ts`)
 * configured for CAPI Clusters. A member is a CAPI Cluster made for the member's target and marked with its pool;
 * binding relabels it as the Cluster's own (one JSON patch under a test, see `capi-pool-members.ts`), so the binding
 * lives on the CAPI Cluster: a restarted engine, one on an empty state folder and the engine a Cluster moved to all
 * find it by its labels. The state folder only remembers where things are: the records (`capi.json`), and the places
 * (management cluster and namespace) ProviderConfigs put CAPI Clusters in, with the pools found there
 * (`capi-pools.json`, {@link CapiPlaces}).
 */
import { readFileSync } from "node:fs";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { Clock } from "../api/clock.ts";
import { apiStatusOf } from "../api/error-message.ts";
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
  CAPI_BACKEND_KEYS,
  engineVersion,
  type TopologyCluster,
  topologyObservation,
} from "./capi-topology.ts";
import type { KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import { type RemoteObjects, readObject } from "./shared/remote-object.ts";
import type { RemotePoolKind } from "./shared/remote-object-pools.ts";

const CAPI_CLUSTER_RESOURCE = { noun: "CAPI Cluster", resource: CAPI_CLUSTERS } as const;

/** What the pools use of the backend. */
export interface CapiPoolParts {
  /** Makes and deletes CAPI Clusters. */
  readonly clusters: Pick<
    RemoteObjects<TopologyCluster, CapiRecord, CapiSettings, Management>,
    "create" | "orderDeletion"
  >;
  management(ref: KubeconfigSecretRef | undefined, providerConfig: string): Promise<Management>;
  readonly places: CapiPlaces;
  readonly clock: Clock;
}

/** A place as kept in the places file: and the pools whose members were made or found there. */
interface KnownPlace extends CapiPlace {
  readonly pools: readonly string[];
}

/** The places CAPI Clusters go to, as learnt from ProviderConfigs' offers and pools' members (kept in a file). */
export class CapiPlaces {
  readonly #file: string;
  readonly #places = new Map<string, KnownPlace>();

  /** The places kept in `file` (none yet: none known). */
  constructor(file: string) {
    this.#file = file;
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // nothing learnt yet
    }
    const places = text === undefined ? [] : (JSON.parse(text) as { places?: KnownPlace[] }).places;
    for (const place of places ?? []) this.#places.set(placeKey(place), place);
  }

  /** Every place known. */
  values(): KnownPlace[] {
    return [...this.#places.values()];
  }

  /** Remembers a place CAPI Clusters go to (read with a ProviderConfig's offer), and that `pool` has members there. */
  learn(place: CapiPlace, pool?: string): void {
    const key = placeKey(place);
    const known = this.#places.get(key);
    const pools = [...new Set([...(known?.pools ?? []), ...(pool === undefined ? [] : [pool])])].sort();
    const next: KnownPlace = { ...place, pools };
    if (known && JSON.stringify(known) === JSON.stringify(next)) return;
    this.#places.set(key, next);
    writeFileAtomicallySync(this.#file, JSON.stringify({ places: [...this.#places.values()] }, null, 2));
  }
}

/** The pool recipe's configuration for CAPI Clusters. */
export function capiPoolKind(
  parts: CapiPoolParts,
): RemotePoolKind<TopologyCluster, CapiRecord, CapiPlace, Management> {
  const list = async (
    api: Management,
    place: CapiPlace,
    labelSelector: string,
    { forbiddenIsNone = false }: { readonly forbiddenIsNone?: boolean } = {},
  ): Promise<TopologyCluster[]> => {
    try {
      const listed = (await api.custom.listNamespacedCustomObject({
        ...CAPI_CLUSTERS,
        namespace: place.namespace,
        labelSelector,
      })) as { items: TopologyCluster[] };
      return listed.items;
    } catch (error) {
      if (forbiddenIsNone && apiStatusOf(error)?.code === 403) return [];
      throw api.error(`listing CAPI Clusters in namespace ${place.namespace}`, error);
    }
  };
  return {
    backend: "capi",
    noun: CAPI_CLUSTER_RESOURCE.noun,
    memberName: poolMemberClusterName,
    member: capiPoolMember,
    boundCluster: (cluster) => {
      const labels = cluster.metadata.labels ?? {};
      return `${labels[CAPI_BACKEND_KEYS.clusterNamespaceLabel]}/${labels[CAPI_BACKEND_KEYS.clusterNameLabel]}`;
    },
    // One JSON patch under a test that the uid label still names the member: the uid, namespace, name and
    // ProviderConfig labels become the Cluster's.
    claim: async (api, cluster, target) => {
      const namespace = cluster.metadata.namespace ?? "";
      const name = cluster.metadata.name;
      const id = capiPoolMember(cluster)?.id ?? "";
      const operations = bindingOperations(cluster, id, target);
      if (operations.length === 0) return;
      try {
        await api.custom.patchNamespacedCustomObject(
          { ...CAPI_CLUSTERS, namespace, name, body: operations },
          setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
        );
      } catch (error) {
        throw api.error(`binding pool member ${id} (CAPI Cluster ${namespace}/${name})`, error);
      }
    },
    recordMember: (record) => record.poolMember,
    record: (owner, place, cluster, member) =>
      recordOf(
        owner,
        place,
        cluster.metadata.name,
        engineVersion(cluster.spec.topology?.version ?? ""),
        member ? { id: member.id, pool: member.pool } : undefined,
      ),
    placeOfRecord,
    placeKey,
    placeOf: async (target) => {
      try {
        return placeOf(capiSettings(target.settings, target.providerConfig), target.providerConfig);
      } catch {
        return undefined; // the backend's own call says what is wrong with them
      }
    },
    // The records' places, and every place learnt (known to hold `pool` when a member of it was made or found there).
    places: (recorded, pool) => [
      ...recorded,
      ...parts.places
        .values()
        .map((place) => ({ place, known: pool !== undefined && place.pools.includes(pool) })),
    ],
    nowhere: (doing) =>
      new Error(
        `capi backend: cannot ${doing} yet: no ProviderConfig read yet says where its CAPI Clusters are; trying again once one is`,
      ),
    open: (place) => parts.management(place.management, place.providerConfig),
    read: (api, place, name) =>
      readObject<TopologyCluster>(api, CAPI_CLUSTER_RESOURCE, place.namespace, name),
    list: (api, place) => list(api, place, POOL_MEMBER_SELECTOR),
    // Not allowed to list there: no pool can be kept there, so none was bound.
    serving: async (api, place, target) =>
      (await list(api, place, boundMemberSelector(target.uid), { forbiddenIsNone: true }))[0],
    observation: (cluster, place) =>
      topologyObservation(cluster, { now: parts.clock.now(), deletionTimeoutMs: place.deletionTimeoutMs }),
    create: (target, version) => parts.clusters.create(target, version),
    delete: async (api, cluster, id) => {
      await parts.clusters.orderDeletion(api, cluster, { member: id });
    },
    learn: (place, pool) => parts.places.learn(place, pool),
  };
}
