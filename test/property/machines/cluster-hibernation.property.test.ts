/**
 * Sleep and wake under kill -9 between any two writes: a Ready Cluster whose hibernate annotation a person
 * flips at random, an engine killed at random points of its reconciles, and a backend that goes to sleep and
 * wakes in its own time (hibernating → hibernated, waking → ready, between reconciles; or, as `capi`'s, a sleep in
 * two steps that halts half-way until the engine orders it on), against the Cluster
 * machine's pure step as the runtime sequences it (support/killed-reconciles.ts).
 *
 * Invariants after every reconcile that ran to its end: a Cluster that says it is Ready (its state, ClusterReady
 * True) is on a cluster that serves; one that says Hibernated is on a cluster that is asleep. (Between a command
 * and the status write that follows it, a kill leaves the old status for the next reconcile to mend: no write
 * can be atomic with a backend's command.) Settled: the Cluster and its cluster are as the annotation asks, and
 * the backend made nothing anew. The steps went through every sleep and wake transition, and a wake asked
 * while the cluster was still going to sleep.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../src/api/constants/hibernation.ts";
import type { ClusterCommand } from "../../../src/machines/cluster/step.ts";
import { aCluster, input, readyAt } from "../../support/cluster-fixtures.ts";
import {
  expectAtRest,
  type ModelBackend,
  type ModelWorld,
  reconcileKilled,
  settle,
} from "../../support/killed-reconciles.ts";

/** `halted`: a sleep in two steps (as `capi`'s: workers gone, machines still running) waiting to be ordered on. */
type Phase = "ready" | "hibernating" | "halted" | "hibernated" | "waking";

interface World extends ModelWorld {
  /** The backend's cluster: serving, asleep, or on its way. */
  phase: Phase;
  /** The backend sleeps in two steps: the second is taken by a second `hibernate`. */
  twoSteps: boolean;
  /** Second steps the engine ordered. */
  secondSteps: number;
  /** Clusters the backend made (a create of a missing one). */
  made: number;
}

const observed = (phase: Phase): ClusterObservation =>
  phase === "ready"
    ? readyAt("1.33.3")
    : phase === "halted"
      ? {
          exists: true,
          phase: "hibernating",
          outOfDate: true,
          version: "1.33.3",
          endpoint: "https://127.0.0.1:6443",
        }
      : { exists: true, phase, version: "1.33.3", endpoint: "https://127.0.0.1:6443" };

const MODEL: ModelBackend<World> = {
  look: (world, cluster) => input(cluster, observed(world.phase), { hibernationOffered: true }),
  *command(world: World, _cluster: Cluster, order: ClusterCommand) {
    switch (order.kind) {
      case "hibernate":
        if (world.phase === "ready" || world.phase === "waking") world.phase = "hibernating";
        else if (world.phase === "halted") {
          world.phase = "hibernated";
          world.secondSteps++;
        }
        break;
      case "wake":
        if (world.phase === "hibernated" || world.phase === "hibernating" || world.phase === "halted")
          world.phase = "waking";
        break;
      case "create":
        world.made++;
        break;
    }
    yield;
  },
};

/** The backend's own progress between two reconciles: a sleep or a wake under way finishes. */
function tick(world: World): void {
  if (world.phase === "hibernating") world.phase = world.twoSteps ? "halted" : "hibernated";
  else if (world.phase === "waking") world.phase = "ready";
}

function ask(world: World, value: "true" | "false" | undefined): void {
  const annotations = { ...world.cluster.metadata.annotations };
  if (value === undefined) delete annotations[HIBERNATE_ANNOTATION];
  else annotations[HIBERNATE_ANNOTATION] = value;
  world.cluster = { ...world.cluster, metadata: { ...world.cluster.metadata, annotations } };
}

const state = (cluster: Cluster) => cluster.status?.providerStatus?.state;
const clusterReady = (cluster: Cluster) =>
  cluster.status?.conditions?.find((condition) => condition.type === "ClusterReady")?.status;

/** What a finished reconcile left must be true of the backend's cluster. */
function expectHonest(world: World): void {
  if (state(world.cluster) === "ready" || clusterReady(world.cluster) === "True")
    expect(world.phase, "Ready on a cluster that does not serve").toBe("ready");
  if (state(world.cluster) === "hibernated")
    expect(world.phase, "Hibernated on a cluster that is not asleep").toBe("hibernated");
}

/** A Ready Cluster on a serving cluster. */
function readyWorld(twoSteps: boolean): World {
  const world: World = {
    cluster: aCluster(),
    phase: "ready",
    twoSteps,
    secondSteps: 0,
    made: 0,
    transitions: new Set(),
  };
  world.phase = "ready";
  settle(world, MODEL, 4);
  world.made = 0;
  expect(state(world.cluster)).toBe("ready");
  return world;
}

type Action =
  | { readonly kind: "reconcile"; readonly killAfter: number | undefined }
  | { readonly kind: "ask"; readonly value: "true" | "false" | undefined }
  | { readonly kind: "tick" };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("reconcile" as const),
      killAfter: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("ask" as const),
      value: fc.constantFrom("true" as const, "false" as const, undefined),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const) }) },
);

describe("sleep and wake, the engine killed between any two writes", () => {
  it("never leaves a Cluster Ready on a stopped cluster nor Hibernated on a running one, and ends as asked", () => {
    const seen = new Set<string>();
    let secondSteps = 0;
    fc.assert(
      // Histories of any length up to 24: the default size keeps them near 10 actions, too short to die in a
      // wake and then in the sleep asked again (and to wake a Hibernated Cluster in more than a few runs).
      fc.property(fc.boolean(), fc.array(action, { maxLength: 24, size: "max" }), (twoSteps, actions) => {
        const world = readyWorld(twoSteps);
        for (const next of actions) {
          if (next.kind === "ask") ask(world, next.value);
          else if (next.kind === "tick") tick(world);
          else if (reconcileKilled(world, MODEL, next.killAfter)) expectHonest(world);
        }
        // Settled: a crash-free engine, the backend's sleeps and wakes finishing between reconciles.
        for (let i = 0; i < 6; i++) {
          settle(world, MODEL, 1);
          expectHonest(world);
          tick(world);
        }
        for (const transition of world.transitions) seen.add(transition);
        secondSteps += world.secondSteps;
        const asleep = world.cluster.metadata.annotations?.[HIBERNATE_ANNOTATION] === "true";
        expect(world.phase).toBe(asleep ? "hibernated" : "ready");
        expect(state(world.cluster)).toBe(asleep ? "hibernated" : "ready");
        expect(world.made, "nothing made anew").toBe(0);
        expectAtRest(world, MODEL);
      }),
      { numRuns: 2_000 },
    );
    for (const transition of [
      "ready → hibernating",
      "hibernating → hibernated",
      "hibernated → waking",
      "waking → ready",
      "hibernating → waking",
    ])
      expect(seen).toContain(transition);
    expect(secondSteps, "a sleep halted half-way was ordered on").toBeGreaterThan(0);
  });
});
