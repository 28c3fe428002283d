/**
 * The one pool recipe for remote objects (`shared/remote-object-pools.ts`) binds crash-safely, with gardener's and
 * capi's own configurations over an API server in memory: the engine is killed at any write of a bind (the claim on
 * the object, the Cluster's record, the idle record's removal), restarted (on the same or an empty state folder),
 * looks around or not, a rival Cluster may try the same member meanwhile, and the bind is retried. Then the Cluster
 * is bound exactly once, no member serves two Clusters, no record leads to a member not bound to its uid, the pool
 * lists each member once, and deleting the members leaves nothing behind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import { systemClock } from "../../../src/api/clock.ts";
import type { JsonObject } from "../../../src/api/common.ts";
import { silentLogger } from "../../../src/api/logger.ts";
import { CapiPlaces, capiPoolKind } from "../../../src/providers/capi-pools.ts";
import { type Management, placeOf } from "../../../src/providers/capi-records.ts";
import { capiSettings } from "../../../src/providers/capi-settings.ts";
import { desiredTopologyCluster } from "../../../src/providers/capi-topology.ts";
import type { Garden } from "../../../src/providers/gardener-garden.ts";
import { gardenerPoolKind } from "../../../src/providers/gardener-pools.ts";
import { gardenerSettings } from "../../../src/providers/gardener-settings.ts";
import { desiredShoot } from "../../../src/providers/gardener-shoot.ts";
import type { KubeconfigAccess } from "../../../src/providers/shared/kubeconfig-secret.ts";
import type { RemoteApi, RemoteObject, RemoteRecord } from "../../../src/providers/shared/remote-object.ts";
import {
  type PoolMemberTarget,
  type PoolPlace,
  RemoteObjectPools,
  type RemotePoolKind,
} from "../../../src/providers/shared/remote-object-pools.ts";
import { FakeRemoteStore, isKilled, KilledRecords, WriteClock } from "../../support/fake-remote-store.ts";

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const error = (what: string, cause: unknown) => new Error(`${what}: ${(cause as Error).message}`, { cause });

/** One backend's side of the world: its settings, where its objects go, and the recipe's configuration for it. */
interface Side {
  readonly providerConfig: string;
  readonly settings: JsonObject;
  readonly namespace: string;
  /** The configuration as the backend makes it, over `store`; `folder` is its state folder. */
  kind(
    store: FakeRemoteStore,
    folder: string,
  ): RemotePoolKind<RemoteObject, RemoteRecord, PoolPlace, RemoteApi>;
}

/** Creates the member's object as the backend's create would (idempotent), and deletes as its delete. */
function objectsOf(
  store: FakeRemoteStore,
  namespace: string,
  desired: (target: PoolMemberTarget, version: string) => RemoteObject,
) {
  return {
    create: async (target: PoolMemberTarget, version: string) => {
      if (store.get(namespace, desired(target, version).metadata.name)) return;
      await store.api.createNamespacedCustomObject({
        group: "",
        version: "",
        plural: "",
        namespace,
        body: desired(target, version),
      });
    },
    orderDeletion: async (api: RemoteApi, object: RemoteObject) => {
      await api.custom
        .deleteNamespacedCustomObject({
          group: "",
          version: "",
          plural: "",
          namespace,
          name: object.metadata.name,
        })
        .catch((e: unknown) => {
          if ((e as { code?: number }).code !== 404) throw e;
        });
      return false;
    },
  };
}

const gardenerSide: Side = (() => {
  const raw = {
    kubeconfigSecretRef: { namespace: "ns", name: "garden" },
    project: "dev",
    shootTemplate: {
      spec: { cloudProfile: { name: "local" }, region: "local", provider: { type: "local" } },
    },
  };
  const settings = gardenerSettings(raw, "gardener");
  const namespace = "garden-dev";
  return {
    providerConfig: "gardener",
    settings: raw,
    namespace,
    kind: (store) => {
      const garden: Garden = {
        custom: store.api,
        core: {} as CoreV1Api,
        error,
        access: {} as KubeconfigAccess,
      };
      return gardenerPoolKind({
        shoots: objectsOf(store, namespace, (target, version) =>
          desiredShoot(target, settings, namespace, version, target.poolMember),
        ),
        garden: async () => garden,
        projectNamespace: async () => namespace,
        places: () => [{ garden: settings.garden, namespace, providerConfig: "gardener" }],
      }) as unknown as RemotePoolKind<RemoteObject, RemoteRecord, PoolPlace, RemoteApi>;
    },
  };
})();

const capiSide: Side = (() => {
  const raw = { clusterClass: { namespace: "classes", name: "in-memory" }, namespace: "clusters" };
  const settings = capiSettings(raw, "capi");
  return {
    providerConfig: "capi",
    settings: raw,
    namespace: "clusters",
    kind: (store, folder) => {
      const management: Management = { server: "fake", custom: store.api, core: {} as CoreV1Api, error };
      const places = new CapiPlaces(join(folder, "capi-pools.json"));
      places.learn(placeOf(settings, "capi")); // as the engine's start does, reading the ProviderConfig's offer
      return capiPoolKind({
        clusters: objectsOf(store, "clusters", (target, version) =>
          desiredTopologyCluster(target, settings, version),
        ),
        management: async () => management,
        places,
        clock: systemClock,
      }) as unknown as RemotePoolKind<RemoteObject, RemoteRecord, PoolPlace, RemoteApi>;
    },
  };
})();

/** An engine's world: the remote objects and the state folder outlive each (killed) instance. */
class World {
  readonly clock = new WriteClock();
  readonly store = new FakeRemoteStore(this.clock);
  readonly disk = new Map<string, RemoteRecord>();
  readonly side: Side;
  #folder: string;
  kind!: RemotePoolKind<RemoteObject, RemoteRecord, PoolPlace, RemoteApi>;
  pools!: RemoteObjectPools<RemoteObject, RemoteRecord, PoolPlace, RemoteApi>;

  constructor(side: Side) {
    this.side = side;
    this.#folder = this.#newFolder();
    this.restart(false);
  }

  /** A new instance: on the same state folder, or on a new, empty one (a Pod rescheduled without its volume). */
  restart(emptyState: boolean): void {
    if (emptyState) {
      this.disk.clear();
      this.#folder = this.#newFolder();
    }
    this.kind = this.side.kind(this.store, this.#folder);
    this.pools = new RemoteObjectPools(this.kind, new KilledRecords(this.disk, this.clock), silentLogger);
  }

  target(uid: string, name: string): ClusterTarget {
    const { providerConfig, settings } = this.side;
    return { uid, namespace: "team-a", name, tenancy: "Exclusive", profile: "p", providerConfig, settings };
  }

  /** The member ids bound to `uid`, as the objects say. */
  boundTo(uid: string): string[] {
    return this.store
      .objects()
      .flatMap((object) => {
        const member = this.kind.member(object);
        return member?.boundTo === uid ? [member.id] : [];
      })
      .sort();
  }

  /** No record leads to a member that is not bound to its uid. */
  expectRecordsTrue(): void {
    for (const record of this.disk.values()) {
      const member = this.kind.recordMember(record);
      if (!member || member.id === record.uid) continue;
      const object = this.store.get(this.side.namespace, this.kind.memberName(member.id));
      expect(object && this.kind.member(object)?.boundTo, `record of ${record.uid}`).toBe(record.uid);
    }
  }

  #newFolder(): string {
    const folder = mkdtempSync(join(tmpdir(), "remote-object-pools-"));
    folders.push(folder);
    return folder;
  }
}

const POOL = "warm";
const M1 = "pool-00000000000a";
const M2 = "pool-00000000000b";
const A = "00000000-0000-4000-8000-00000000000a";
const B = "00000000-0000-4000-8000-00000000000b";

/** Each attempt of a bind is killed at that write (3 and on: past its last write, so it completes). */
const attempt = fc.record({
  killAt: fc.nat({ max: 4 }),
  emptyState: fc.boolean(),
  lookAround: fc.boolean(),
  rival: fc.boolean(),
});

describe.each([
  ["gardener", gardenerSide],
  ["capi", capiSide],
])("the remote-object pool recipe configured for %s", (_name, side) => {
  it("binds a Cluster exactly once however a kill -9 cuts its binds short, no member serves two, none is left", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 4 }), async (attempts) => {
        const world = new World(side);
        const config = world.target("", "");
        for (const id of [M1, M2])
          await world.pools.createMember({ id, pool: POOL, version: "1.33.2" }, config);
        const a = world.target(A, "a");
        const b = world.target(B, "b");
        let wanted = M1; // the member the engine claimed for A
        let rivalWon = false;
        for (const { killAt, emptyState, lookAround, rival } of attempts) {
          world.clock.killAfter(killAt);
          await world.pools.bind(wanted, a).catch((e: unknown) => {
            if (!isKilled(e)) throw e;
          });
          world.clock.killAfter(undefined);
          world.restart(emptyState);
          world.expectRecordsTrue();
          if (lookAround) {
            await world.pools.listMembers(POOL);
            await world.pools.resolve(a);
            world.expectRecordsTrue();
          }
          if (rival && !rivalWon) {
            // Beyond the contract (the engine claims in its API first): the claim on the object alone is exclusive.
            const claimed = world.boundTo(A).includes(M1);
            const bound = world.pools.bind(M1, b);
            if (claimed)
              await expect(bound).rejects.toThrow(
                `serves Cluster team-a/a (uid ${A}); Cluster team-a/b cannot take it`,
              );
            else {
              await bound;
              rivalWon = true;
              await expect(world.pools.bind(M1, a)).rejects.toThrow("cannot take it");
              wanted = M2;
            }
          }
        }
        await world.pools.bind(wanted, a); // the engine's retry, not cut short

        expect(world.boundTo(A)).toEqual([wanted]);
        expect(world.boundTo(B)).toEqual(rivalWon ? [M1] : []);
        world.expectRecordsTrue();
        world.restart(false);
        expect(await world.pools.servedByMember(a)).toBe(true);
        expect(world.kind.recordMember((await world.pools.resolve(a)) as RemoteRecord)?.id).toBe(wanted);
        const listed = await world.pools.listMembers(POOL);
        expect(listed.map((m) => [m.id, m.boundTo]).sort()).toEqual(
          [
            [M1, rivalWon ? B : wanted === M1 ? A : undefined],
            [M2, wanted === M2 ? A : undefined],
          ].sort(),
        );
        // No idle record of a bound member is left once listed; every record leads to an object.
        for (const record of world.disk.values()) {
          const member = world.kind.recordMember(record);
          if (member?.id === record.uid)
            expect(listed.find((m) => m.id === member.id)?.boundTo).toBeUndefined();
        }
        for (const id of [M1, M2]) await world.pools.deleteMember(id);
        expect(world.store.objects()).toEqual([]);
        expect([...world.disk.values()]).toEqual([]);
        expect(await world.pools.resolve(a)).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  it("kills every bind at each of its writes in turn: the claim first, then the Cluster's record, then the idle one's removal", async () => {
    const writes: string[] = [];
    for (let killAt = 0; ; killAt++) {
      const world = new World(side);
      for (const id of [M1, M2])
        await world.pools.createMember({ id, pool: POOL, version: "1.33.2" }, world.target("", ""));
      await world.pools.listMembers(POOL); // the idle members' records
      const a = world.target(A, "a");
      world.clock.killAfter(killAt);
      const killed = await world.pools.bind(M1, a).then(
        () => false,
        (e: unknown) => isKilled(e) || Promise.reject(e),
      );
      world.clock.killAfter(undefined);
      if (!killed) {
        expect(killAt).toBe(3); // three writes in all
        break;
      }
      writes.push(
        `${world.boundTo(A).join() || "-"} ${world.disk.has(A) ? "record" : "-"} ${world.disk.has(M1) ? "idle" : "-"}`,
      );
      world.restart(false);
      await world.pools.bind(M1, a);
      expect(world.boundTo(A)).toEqual([M1]);
      expect(world.disk.has(M1)).toBe(false);
    }
    // What each kill left: nothing; claimed only; claimed and recorded (the idle record still there).
    expect(writes).toEqual(["- - idle", `${M1} - idle`, `${M1} record idle`]);
  });
});
