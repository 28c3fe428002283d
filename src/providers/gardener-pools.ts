/**
 * Warm pools (contract 1.5) of the `gardener` backend, as the remote-object pool recipe (`shared/remote-object-pools.ts`)
 * configured for Shoots. A member is a Shoot made for the member's id (its name derived from the id, annotated with the
 * pool, the id and the version). Gardener cannot rename a Shoot, so binding it to a Cluster is a record — kept ON THE
 * SHOOT (`engine.openmcp.cloud/bound-to: <Cluster uid>`, written by one merge patch guarded by the resourceVersion
 * read): an engine whose state folder is empty (a rescheduled Pod, a standby, the engine a Cluster moved to) finds
 * members and bindings in the garden. The state file only caches where they are.
 *
 * Caveat: the backend learns where to list a pool from its records, else from the ProviderConfigs whose offer it read
 * (the engine reads each at start and every minute); before either, listing fails (the engine tries again) instead
 * of answering "none".
 */
import { type Garden, listShoots, type ShootRecord } from "./gardener-garden.ts";
import { type GardenerSettings, gardenerSettings } from "./gardener-settings.ts";
import {
  GARDENER_KEYS,
  memberShootName,
  type Shoot,
  shootObservation,
  shootPoolMember,
  shootServes,
} from "./gardener-shoot.ts";
import type { KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import { patchObject, type RemoteObjects, readObject } from "./shared/remote-object.ts";
import type { RemotePoolKind } from "./shared/remote-object-pools.ts";

const SHOOTS = {
  noun: "Shoot",
  resource: { group: "core.gardener.cloud", version: "v1beta1", plural: "shoots" },
} as const;

/** A project's namespace in a garden, and the ProviderConfig it was reached through (for messages). */
export interface ProjectPlace {
  readonly garden: KubeconfigSecretRef;
  readonly namespace: string;
  readonly providerConfig: string;
}

/** What the pools use of the backend. */
export interface GardenerPoolParts {
  /** Makes and deletes Shoots. */
  readonly shoots: Pick<
    RemoteObjects<Shoot, ShootRecord, GardenerSettings, Garden>,
    "create" | "orderDeletion"
  >;
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

/** The pool recipe's configuration for Shoots. */
export function gardenerPoolKind(
  parts: GardenerPoolParts,
): RemotePoolKind<Shoot, ShootRecord, ProjectPlace, Garden> {
  return {
    backend: "gardener",
    noun: SHOOTS.noun,
    memberName: memberShootName,
    member: shootPoolMember,
    boundCluster: (shoot) => shoot.metadata.annotations?.[GARDENER_KEYS.clusterAnnotation] ?? "(unnamed)",
    claim: async (garden, shoot, target) => {
      await patchObject(garden, SHOOTS, shoot, {
        metadata: {
          annotations: {
            [GARDENER_KEYS.boundToAnnotation]: target.uid,
            [GARDENER_KEYS.clusterAnnotation]: `${target.namespace}/${target.name}`,
          },
        },
      });
    },
    recordMember: (record) => record.member,
    record: (owner, place, shoot, member) => ({
      uid: owner.uid,
      cluster: `${owner.namespace}/${owner.name}`,
      providerConfig: place.providerConfig,
      garden: place.garden,
      namespace: place.namespace,
      shoot: shoot.metadata.name,
      version: shoot.spec.kubernetes?.version ?? member?.version ?? "",
      ...(member ? { member: { id: member.id, pool: member.pool, version: member.version } } : {}),
    }),
    placeOfRecord: (record) => ({
      garden: record.garden,
      namespace: record.namespace,
      providerConfig: record.providerConfig,
    }),
    placeKey: (place) => `${place.garden.namespace}/${place.garden.name}/${place.namespace}`,
    placeOf: async (target) => {
      let settings: GardenerSettings;
      try {
        settings = gardenerSettings(target.settings, target.providerConfig);
      } catch {
        return undefined; // nowhere to look: what the Cluster's commands say about its settings stands
      }
      const garden = await parts.garden(settings.garden, target.providerConfig);
      const namespace = await parts.projectNamespace(garden, settings, target.providerConfig);
      return namespace === undefined
        ? undefined
        : { garden: settings.garden, namespace, providerConfig: target.providerConfig };
    },
    // Where the records say; with none (a new state folder), in every project served.
    places: (recorded) => {
      const known = recorded.filter((place) => place.known);
      return known.length > 0 ? known : parts.places().map((place) => ({ place, known: true }));
    },
    nowhere: (doing) =>
      new Error(
        `gardener backend: cannot ${doing} yet: it knows no Gardener project to look in (it learns them from the ProviderConfigs' offers, which the engine reads at start and every minute)`,
      ),
    open: (place) => parts.garden(place.garden, place.providerConfig),
    read: (garden, place, name) => readObject<Shoot>(garden, SHOOTS, place.namespace, name),
    list: (garden, place) => listShoots(garden, place.namespace),
    serving: async (garden, place, target) =>
      (await listShoots(garden, place.namespace)).find((shoot) => shootServes(shoot, target)),
    observation: (shoot) => shootObservation(shoot),
    create: (target, version) => parts.shoots.create(target, version),
    delete: async (garden, shoot, id) => {
      await parts.shoots.orderDeletion(garden, shoot, { member: id });
    },
  };
}
