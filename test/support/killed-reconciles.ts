/**
 * The Cluster machine's pure step as the runtime sequences it, for model-based tests that kill the engine
 * between any two writes: up to three rounds of look → step → object write → each command's writes, then the
 * object and its status (machine-controller.ts). Each write is a `yield`; a test stops the generator there to
 * kill -9 the engine, whose reconcile in flight then never finishes.
 */
import { expect } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterCommand, ClusterStepInput } from "../../src/machines/cluster/step.ts";
import { stepCluster } from "../../src/machines/cluster/step.ts";
import { applied } from "../../src/machines/shared/json-patch.ts";
import { changesTo } from "../../src/runtime/api-server/patch-object.ts";

/** The model's Cluster as the API server holds it, and every transition a step took (`before → after`). */
export interface ModelWorld {
  cluster: Cluster;
  readonly transitions: Set<string>;
}

/** How a test's model answers the engine: what it looks at, and each command's writes (a yield after each). */
export interface ModelBackend<W extends ModelWorld> {
  look(world: W, cluster: Cluster): ClusterStepInput;
  command(world: W, cluster: Cluster, order: ClusterCommand): Generator<void>;
  /** Checked before an object write lands, with the object after it. */
  beforeObjectWrite?(world: W, after: Cluster): void;
}

const bump = (cluster: Cluster): Cluster => ({
  ...cluster,
  metadata: { ...cluster.metadata, resourceVersion: String(Number(cluster.metadata.resourceVersion) + 1) },
});

/** One reconcile as the machine controller sequences it, yielding after every write. */
export function* reconcile<W extends ModelWorld>(world: W, model: ModelBackend<W>): Generator<void> {
  let local = world.cluster;
  for (let round = 1; round <= 3; round++) {
    const step = stepCluster(model.look(world, local));
    world.transitions.add(`${step.previousState} → ${step.state}`);
    const writeObject = () => {
      const operations = changesTo(world.cluster, "metadata", step.desired.metadata);
      if (operations.length === 0) return false;
      const after = applied(world.cluster, operations);
      model.beforeObjectWrite?.(world, after);
      world.cluster = bump(after);
      return true;
    };
    const last = step.commands.length === 0 || round === 3;
    if (!last) {
      if (writeObject()) yield;
      local = { ...world.cluster, status: step.desired.status };
      for (const order of step.commands) yield* model.command(world, local, order);
      continue;
    }
    if (writeObject()) yield;
    const status = changesTo(world.cluster, "status", step.desired.status);
    if (status.length > 0) {
      world.cluster = bump(applied(world.cluster, status));
      yield;
    }
    return;
  }
}

/** Runs one reconcile, killed after `killAfter` writes (undefined: to its end); whether it ran to its end. */
export function reconcileKilled<W extends ModelWorld>(
  world: W,
  model: ModelBackend<W>,
  killAfter: number | undefined,
): boolean {
  let writes = 0;
  for (const _ of reconcile(world, model)) {
    if (killAfter !== undefined && ++writes >= killAfter) return false; // kill -9: the rest never happens
  }
  return true;
}

/** Runs reconciles, killed after `kills[i]` writes each (undefined: to their end), then settles without crashes. */
export function runKilled<W extends ModelWorld>(
  world: W,
  model: ModelBackend<W>,
  kills: readonly (number | undefined)[],
): void {
  for (const killAfter of kills) reconcileKilled(world, model, killAfter);
  settle(world, model);
}

/** Crash-free reconciles until the model is at rest. */
export function settle<W extends ModelWorld>(world: W, model: ModelBackend<W>, reconciles = 6): void {
  for (let i = 0; i < reconciles; i++) for (const _ of reconcile(world, model));
}

/** At rest: the same look writes nothing more. */
export function expectAtRest<W extends ModelWorld>(world: W, model: ModelBackend<W>): void {
  const again = stepCluster(model.look(world, world.cluster));
  expect(changesTo(world.cluster, "metadata", again.desired.metadata)).toEqual([]);
  expect(changesTo(world.cluster, "status", again.desired.status)).toEqual([]);
}
