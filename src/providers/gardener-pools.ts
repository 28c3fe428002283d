/**
 * Warm pools (contract 1.5) of the `gardener` backend. A member is a Shoot made for the member's id (its name derived
 * from the id, annotated with the pool, the id and the version). Gardener cannot rename a Shoot, so binding it to a
 * Cluster is a record — kept ON THE SHOOT (`engine.openmcp.cloud/bound-to: <Cluster uid>`): an engine whose state
 * folder is empty (a rescheduled Pod, a standby, the engine a Cluster moved to) finds members and bindings in the
 * garden. The state file only caches where they are.
 *
 * Guarantees: every method is idempotent and leaves, after a kill -9 at any point, what the next call finds (the
 * Shoot's annotations are written before the local record); a member is bound to one Cluster uid only, and never
 * while it is being deleted. Caveat: the backend learns where to list a pool from its records, else from the
 * ProviderConfigs whose offer it read (the engine reads each at start and every minute); before either, listing
 * fails (the engine tries again) instead of answering "none".
 */
import type { ClusterTarget } from "../api/backend.ts";
import type { PoolMemberObservation, PoolMemberSpec, PoolSupport } from "../api/backend-contract.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import { isNotFound } from "../api/error-message.ts";
import { type Garden, listShoots, type ShootRecord } from "./gardener-garden.ts";
import { type GardenerSettings, gardenerSettings } from "./gardener-settings.ts";
import {
  GARDENER_KEYS,
  memberShootName,
  type Shoot,
  type ShootPoolMember,
  shootObservation,
  shootPoolMember,
  shootServes,
} from "./gardener-shoot.ts";
import { describeCluster } from "./shared/error-wording.ts";
import type { KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import type { RecordFile } from "./shared/record-file.ts";
import type { RemoteObjects } from "./shared/remote-object.ts";

const SHOOTS = { group: "core.gardener.cloud", version: "v1beta1", plural: "shoots" } as const;

/** A project's namespace in a garden, and the ProviderConfig it was reached through (for messages). */
export interface ProjectPlace {
  readonly garden: KubeconfigSecretRef;
  readonly namespace: string;
  readonly providerConfig: string;
}

/** What the pools use of the backend. */
export interface GardenerPoolParts {
  /** The backend's records (shared with `shoots`): a cache of where Shoots are. */
  readonly records: RecordFile<ShootRecord>;
  readonly shoots: RemoteObjects<Shoot, ShootRecord, GardenerSettings, Garden>;
  garden(ref: KubeconfigSecretRef, providerConfig: string): Promise<Garden>;
  /** The project's namespace, as last read or read now; undefined when the project or its namespace does not exist. */
  projectNamespace(
    garden: Garden,
    settings: GardenerSettings,
    providerConfig: string,
  ): Promise<string | undefined>;
  /** The projects of the ProviderConfigs served now (their offer read last without error). */
  places(): readonly ProjectPlace[];
}

/** See the file's summary. */
export class GardenerPools implements PoolSupport {
  readonly #parts: GardenerPoolParts;
  /** Members being made now, by id: their Shoot carries the pool's facts from its creation on. */
  readonly #making = new Map<string, ShootPoolMember>();

  constructor(parts: GardenerPoolParts) {
    this.#parts = parts;
  }

  /** The pool member whose Shoot serves `uid` (a member's own id, or a bound Cluster's uid), if known here. */
  memberOf(uid: string): ShootPoolMember | undefined {
    return this.#parts.records.get(uid)?.member ?? this.#making.get(uid);
  }

  async createMember(member: PoolMemberSpec, target: ClusterTarget): Promise<void> {
    this.#making.set(member.id, { id: member.id, pool: member.pool, version: member.version });
    try {
      const settings = target.settings ? { settings: target.settings } : {};
      await this.#parts.shoots.create(
        poolMemberTarget(member.id, { name: target.providerConfig, ...settings }),
        member.version,
      );
    } finally {
      this.#making.delete(member.id);
    }
  }

  async listMembers(pool: string): Promise<readonly PoolMemberObservation[]> {
    const { records } = this.#parts;
    const recorded = records.values().filter((r) => r.member?.pool === pool && r.uid === r.member.id);
    // A pool's members live where its records say; with none (a new state folder), in every project served.
    const places = distinct(recorded.length > 0 ? recorded.map(placeOf) : this.#parts.places());
    if (places.length === 0)
      throw new Error(
        `gardener backend: cannot list pool ${pool} yet: it knows no Gardener project to look in (it learns them from the ProviderConfigs' offers, which the engine reads at start and every minute)`,
      );
    const listed = new Map<string, PoolMemberObservation>();
    const seen = new Set<string>();
    for (const place of places) {
      const garden = await this.#parts.garden(place.garden, place.providerConfig);
      for (const shoot of await listShoots(garden, place.namespace)) {
        const member = shootPoolMember(shoot);
        if (member?.pool !== pool) continue;
        seen.add(member.id);
        if (shoot.metadata.deletionTimestamp) continue; // being deleted: left out
        if (!records.has(member.id)) records.put(memberRecord(place, shoot, member));
        const { boundTo, ...spec } = member;
        listed.set(member.id, {
          ...spec,
          observation: shootObservation(shoot),
          ...(boundTo ? { boundTo } : {}),
        });
      }
    }
    // Records of members whose Shoot is gone (or was never made: a crash before its create) go.
    for (const record of recorded) if (!seen.has(record.uid)) records.remove(record.uid);
    return [...listed.values()];
  }

  /** Annotates the member's Shoot `bound-to` the Cluster's uid (the truth), then records it here (a cache). */
  async bind(id: string, target: ClusterTarget): Promise<void> {
    const { records, shoots } = this.#parts;
    const settings = gardenerSettings(target.settings, target.providerConfig);
    const garden = await this.#parts.garden(settings.garden, target.providerConfig);
    const namespace =
      records.get(id)?.namespace ??
      (await this.#parts.projectNamespace(garden, settings, target.providerConfig));
    const name = memberShootName(id);
    if (namespace === undefined)
      throw new Error(
        `gardener backend: no pool member ${id}: Gardener project ${settings.project} does not exist (or has no namespace yet)`,
      );
    const shoot = await readShoot(garden, namespace, name);
    const member = shoot && shootPoolMember(shoot);
    if (!shoot || member?.id !== id)
      throw new Error(
        `gardener backend: no pool member ${id}: no Shoot ${namespace}/${name} was made for it`,
      );
    if (member.boundTo !== undefined && member.boundTo !== target.uid)
      throw new Error(
        `gardener backend: pool member ${id} (Shoot ${namespace}/${name}) serves the Cluster with uid ${member.boundTo}; it cannot serve ${describeCluster(target)} too`,
      );
    if (member.boundTo === undefined) {
      if (shoot.metadata.deletionTimestamp)
        throw new Error(`gardener backend: pool member ${id} (Shoot ${namespace}/${name}) is being deleted`);
      await shoots.patch(garden, shoot, {
        metadata: {
          annotations: {
            [GARDENER_KEYS.boundToAnnotation]: target.uid,
            [GARDENER_KEYS.clusterAnnotation]: `${target.namespace}/${target.name}`,
          },
        },
      });
    }
    records.put(
      shootRecord(
        clusterOwner(target),
        { garden: settings.garden, namespace, providerConfig: target.providerConfig },
        shoot,
        member,
      ),
    );
  }

  async deleteMember(id: string): Promise<void> {
    const { records, shoots } = this.#parts;
    const record = records.get(id) ?? (await this.#findMember(id));
    if (!record) return;
    // Its bindings' records go once their Cluster sees the Shoot gone (as after a Cluster's own delete).
    for (const bound of records.values())
      if (bound.member?.id === id && bound.uid !== id && !bound.deleting)
        records.put({ ...bound, deleting: true });
    await shoots.delete(poolMemberTarget(id, { name: record.providerConfig }));
    // Ordered: from here the Shoot says the rest (listMembers leaves it out while it goes).
    records.remove(id);
  }

  /**
   * Records where the Shoot serving `target` is when no record says (a lost or new state folder, a moved Cluster):
   * the Shoot in its project that was made for its uid or is bound to it. Reads the garden only.
   */
  async find(target: ClusterTarget): Promise<void> {
    const { records } = this.#parts;
    if (records.has(target.uid)) return;
    let settings: GardenerSettings;
    try {
      settings = gardenerSettings(target.settings, target.providerConfig);
    } catch {
      return; // nowhere to look: what the Cluster's commands say about its settings stands
    }
    const garden = await this.#parts.garden(settings.garden, target.providerConfig);
    const namespace = await this.#parts.projectNamespace(garden, settings, target.providerConfig);
    if (namespace === undefined) return; // no project: no Shoot
    const shoot = (await listShoots(garden, namespace)).find((s) => shootServes(s, target));
    if (!shoot) return;
    const place = { garden: settings.garden, namespace, providerConfig: target.providerConfig };
    records.put({
      ...shootRecord(clusterOwner(target), place, shoot, shootPoolMember(shoot)),
      ...(shoot.metadata.deletionTimestamp ? { deleting: true } : {}),
    });
  }

  /** After a bound Cluster's deletion was ordered: the member's own record goes (its Shoot is the Cluster's). */
  clusterDeleted(target: ClusterTarget): void {
    const member = this.#parts.records.get(target.uid)?.member;
    if (member && member.id !== target.uid) this.#parts.records.remove(member.id);
  }

  /** The member's Shoot in a project served now, recorded; undefined when none has it. */
  async #findMember(id: string): Promise<ShootRecord | undefined> {
    const places = distinct(this.#parts.places());
    if (places.length === 0)
      throw new Error(
        `gardener backend: cannot delete pool member ${id} yet: it knows no Gardener project to look in`,
      );
    for (const place of places) {
      const garden = await this.#parts.garden(place.garden, place.providerConfig);
      const shoot = await readShoot(garden, place.namespace, memberShootName(id));
      const member = shoot && shootPoolMember(shoot);
      if (!shoot || member?.id !== id) continue;
      const record = memberRecord(place, shoot, member);
      this.#parts.records.put(record);
      return record;
    }
    return undefined;
  }
}

/** The record of member `member`'s own Shoot. */
function memberRecord(place: ProjectPlace, shoot: Shoot, member: ShootPoolMember): ShootRecord {
  return shootRecord({ uid: member.id, cluster: `pool/${member.id}` }, place, shoot, member);
}

/** Whom a record of a Cluster's Shoot is for. */
const clusterOwner = (target: ClusterTarget) => ({
  uid: target.uid,
  cluster: `${target.namespace}/${target.name}`,
});

/** The record of `shoot` in `place`, serving `owner` (a Cluster, or a member itself), made for `member` if it was. */
function shootRecord(
  owner: Pick<ShootRecord, "uid" | "cluster">,
  place: ProjectPlace,
  shoot: Shoot,
  member: ShootPoolMember | undefined,
): ShootRecord {
  return {
    ...owner,
    providerConfig: place.providerConfig,
    garden: place.garden,
    namespace: place.namespace,
    shoot: shoot.metadata.name,
    version: shoot.spec.kubernetes?.version ?? member?.version ?? "",
    ...(member ? { member: { id: member.id, pool: member.pool, version: member.version } } : {}),
  };
}

function placeOf(record: ShootRecord): ProjectPlace {
  return { garden: record.garden, namespace: record.namespace, providerConfig: record.providerConfig };
}

/** Each project once (two ProviderConfigs may name one). */
function distinct(places: readonly ProjectPlace[]): ProjectPlace[] {
  const byKey = new Map<string, ProjectPlace>();
  for (const place of places)
    byKey.set(`${place.garden.namespace}/${place.garden.name}/${place.namespace}`, place);
  return [...byKey.values()];
}

async function readShoot(garden: Garden, namespace: string, name: string): Promise<Shoot | undefined> {
  try {
    return (await garden.custom.getNamespacedCustomObject({ ...SHOOTS, namespace, name })) as Shoot;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw garden.error(`reading Shoot ${namespace}/${name}`, error);
  }
}
