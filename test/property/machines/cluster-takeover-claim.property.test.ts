/**
 * A moved Cluster's take-over and a new Cluster's pool claim, as machine transitions under kill -9 between any two
 * writes: the pure step as the runtime sequences it (up to three rounds of look → step → object write → each
 * command's writes, then the object and its status), against a model API server and backend. A crash drops the
 * reconcile in flight wherever it is; a crash-free engine then settles the world.
 *
 * Invariants, at every write: nothing is asked of the backend for a moved Cluster before its state is imported
 * (no create, update or delete while the hand-over Secret is there); the hand-over annotation goes only after the
 * Secret; a Cluster never holds two clusters (a made one and a pool member) and a member is claimed once. Settled:
 * the moved Cluster is Ready on the imported cluster, its Secret and annotation gone, nothing made anew; the pooled
 * Cluster is Ready on the member it claimed, which its annotation names. And the steps went through `takingOver`
 * and `claimingPoolMember`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import { CLUSTER_FINALIZERS } from "../../../src/api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../../src/api/constants/cluster-pool.ts";
import { HANDOVER_ANNOTATION } from "../../../src/api/move.ts";
import type { ClusterCommand, ClusterStepInput } from "../../../src/machines/cluster/step.ts";
import { aCluster, input, readyAt } from "../../support/cluster-fixtures.ts";
import {
  expectAtRest,
  type ModelBackend,
  type ModelWorld,
  runKilled,
  settle,
} from "../../support/killed-reconciles.ts";

const SECRET = "moved-handover";
const READY = readyAt("1.33.3");

/** The model world of one Cluster: its object, the backend, the hand-over Secret, a pool of two members. */
interface World extends ModelWorld {
  /** The backend's view of the Cluster's cluster (a bound member counts as it). */
  backend: ClusterObservation;
  /** Clusters the backend made for it (a create of a missing one). */
  made: number;
  secret: "ready" | undefined;
  pool: { rv: number; members: Array<{ id: string; claimedBy?: string }> };
  /** The member bound to the Cluster at the backend. */
  bound: string | undefined;
}

/** The look: what the Cluster kind's observe reads (the backend is not asked while the hand-over is pending). */
function look(world: World, cluster: Cluster): ClusterStepInput {
  const annotation = cluster.metadata.annotations?.[HANDOVER_ANNOTATION];
  const handover =
    annotation === undefined ? undefined : { secret: annotation, state: world.secret ?? ("gone" as const) };
  const pending = handover !== undefined && handover.state !== "gone";
  const observation = pending ? { exists: false as const } : world.backend;
  const claimed = world.pool.members.find((member) => member.claimedBy === cluster.metadata.uid);
  const idle = world.pool.members.find((member) => member.claimedBy === undefined);
  const mayTake =
    !observation.exists &&
    !cluster.metadata.deletionTimestamp &&
    !(cluster.metadata.finalizers ?? []).includes(CLUSTER_FINALIZERS.cluster);
  const poolMember = pending
    ? undefined
    : claimed
      ? { pool: "warm", member: claimed.id, claimed: true }
      : idle && mayTake
        ? { pool: "warm", member: idle.id, claimed: false }
        : undefined;
  return input(cluster, observation, {
    ...(handover ? { handover } : {}),
    ...(poolMember ? { poolMember } : {}),
  });
}

/** One command's writes, one at a time (a yield after each: the engine may die there). */
function* command(world: World, cluster: Cluster, order: ClusterCommand): Generator<void> {
  if (order.kind !== "takeOver") expect(world.secret, `${order.kind} before the import`).toBeUndefined();
  switch (order.kind) {
    case "takeOver":
      if (world.secret === "ready") {
        world.backend = READY; // the import: the backend holds the cluster as the source left it
        yield;
        world.secret = undefined;
        yield;
      }
      return;
    case "claimPoolMember": {
      const index = world.pool.members.findIndex((member) => member.id === order.member);
      const entry = world.pool.members[index];
      if (!entry || (entry.claimedBy && entry.claimedBy !== cluster.metadata.uid)) return;
      if (!entry.claimedBy) {
        world.pool.members[index] = { ...entry, claimedBy: cluster.metadata.uid ?? "" };
        world.pool.rv++;
        yield;
      }
      world.bound = order.member;
      world.backend = READY;
      yield;
      return;
    }
    case "create":
      if (!world.backend.exists) {
        world.made++;
        world.backend = READY;
      }
      yield;
      return;
    case "update":
    case "delete":
      yield;
      return;
  }
}

/** The take-over's and the claim's model: the hand-over annotation goes only after the Secret. */
const MODEL: ModelBackend<World> = {
  look,
  command,
  beforeObjectWrite: (world, after) => {
    const annotation = world.cluster.metadata.annotations?.[HANDOVER_ANNOTATION];
    if (annotation && world.secret !== undefined)
      expect(after.metadata.annotations?.[HANDOVER_ANNOTATION], "annotation gone before the Secret").toBe(
        annotation,
      );
  },
};

/** A moved Cluster: the source's finalizer, labels and Ready status, the hand-over annotation, the Secret. */
function movedWorld(source: Cluster): World {
  const cluster: Cluster = {
    ...source,
    metadata: {
      ...source.metadata,
      uid: "uid-moved",
      annotations: { ...source.metadata.annotations, [HANDOVER_ANNOTATION]: SECRET },
    },
  };
  return {
    cluster,
    backend: { exists: false },
    made: 0,
    secret: "ready",
    pool: { rv: 1, members: [] },
    bound: undefined,
    transitions: new Set(),
  };
}

function pooledWorld(): World {
  return {
    cluster: aCluster(),
    backend: { exists: false },
    made: 0,
    secret: undefined,
    pool: { rv: 1, members: [{ id: "pool-1" }, { id: "pool-2" }] },
    bound: undefined,
    transitions: new Set(),
  };
}

/** The Ready Cluster a source engine hands over: settled on a backend that holds it. */
function readySource(): Cluster {
  const world = pooledWorld();
  world.pool.members = [];
  world.backend = READY;
  settle(world, MODEL, 5);
  expect(world.cluster.status?.providerStatus?.state).toBe("ready");
  return world.cluster;
}

const killPlan = fc.array(fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }), { maxLength: 8 });

describe("a moved Cluster's take-over and a pool claim, killed between any two writes", () => {
  const source = readySource();

  it("imports before anything else is asked of the backend, and ends Ready on the imported cluster", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(killPlan, (kills) => {
        const world = movedWorld(source);
        runKilled(world, MODEL, kills);
        for (const transition of world.transitions) seen.add(transition);
        expect(world.secret).toBeUndefined();
        expect(world.cluster.metadata.annotations?.[HANDOVER_ANNOTATION]).toBeUndefined();
        expect(world.cluster.status?.providerStatus?.state).toBe("ready");
        expect(world.made, "nothing made anew").toBe(0);
        expectAtRest(world, MODEL);
      }),
      { numRuns: 200 },
    );
    expect(seen).toContain("ready → takingOver");
    expect(seen).toContain("takingOver → ready");
  });

  it("claims one member, binds it, and ends Ready on it with the member named", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(killPlan, fc.boolean(), (kills, stolen) => {
        const world = pooledWorld();
        // Another Cluster may take the first member before ours looks again.
        if (stolen) world.pool.members[0] = { id: "pool-1", claimedBy: "uid-other" };
        runKilled(world, MODEL, kills);
        for (const transition of world.transitions) seen.add(transition);
        const ours = world.pool.members.filter((member) => member.claimedBy === world.cluster.metadata.uid);
        expect(ours).toHaveLength(1);
        expect(world.made, "never made as well").toBe(0);
        expect(world.bound).toBe(ours[0]?.id);
        expect(world.cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]).toBe(
          `warm/${world.bound}`,
        );
        expect(world.cluster.metadata.finalizers).toContain(CLUSTER_FINALIZERS.cluster);
        expect(world.cluster.status?.providerStatus?.state).toBe("ready");
      }),
      { numRuns: 200 },
    );
    expect(seen).toContain("pending → claimingPoolMember");
    expect(seen).toContain("claimingPoolMember → ready");
  });
});
