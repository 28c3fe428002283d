/**
 * Rollouts over random fleets, for the property tests: what a test draws of the Rollout, and one reconcile of it
 * sequenced as the machine controller does, which a test may kill after any write.
 */
import fc from "fast-check";
import type { Rollout, RolloutSpec } from "../../src/api/rollout.ts";
import { type RolloutCommand, type RolloutStepInput, stepRollout } from "../../src/machines/rollout/step.ts";
import { type Fleet, fleetProfile } from "./rollout-fleet.ts";

/** The instant a run's fleet starts at. */
export const RUN_T0 = Date.parse("2026-11-28T12:00:00Z");

/** The requeue timing of a run's steps. */
export const RUN_TIMING = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };

/** The names of a fleet of `size` Clusters: c00, c01, … */
export const fleetNames = (size: number): string[] =>
  Array.from({ length: size }, (_, i) => `c${String(i).padStart(2, "0")}`);

/**
 * The Rollout's pure step over `fleet` at `nowMs`, the fleet's ClusterProfile offering `versions`, with the run's
 * timing and `more` (what the targets' API servers say of deprecated APIs, the ProviderConfig of a settings run).
 */
export function fleetStep(
  fleet: Fleet,
  object: Rollout,
  nowMs: number,
  versions: readonly string[],
  more: Pick<RolloutStepInput, "deprecatedApis" | "providerConfig"> = {},
) {
  return stepRollout({
    object,
    clusters: fleet.list(),
    profiles: [fleetProfile(versions)],
    ...more,
    now: new Date(nowMs).toISOString(),
    nowMs,
    timing: RUN_TIMING,
  });
}

/**
 * The drawn part of a random fleet's Rollout, for `fc.record`: 1 to `most.size` Clusters, a canary of 0 to
 * `most.canary`, a maxUnavailable of 1 to `most.maxUnavailable`, and no stages or one of `stages`.
 */
export function fleetRolloutDraws(
  most: { readonly size: number; readonly canary: number; readonly maxUnavailable: number },
  ...stages: RolloutSpec["stages"][]
) {
  return {
    size: fc.integer({ min: 1, max: most.size }),
    canary: fc.integer({ min: 0, max: most.canary }),
    maxUnavailable: fc.integer({ min: 1, max: most.maxUnavailable }),
    stages: fc.constantFrom<RolloutSpec["stages"]>(undefined, ...stages),
  };
}

/** What one step of a Rollout decided: its desired object and its commands. */
export type RolloutStepResult = ReturnType<typeof stepRollout>;

/**
 * One reconcile of `stored.rollout` as the machine controller sequences it: up to three rounds of a look (`step`,
 * over the rollout as this reconcile holds it) and each of that step's commands (`write`, which yields after every
 * write it makes), then the rollout's status is stored (yielding "status"). Dropping the generator after any yield
 * is a kill -9: the rest of the reconcile never happens.
 */
export function* reconcileRollout<Write extends string>(
  stored: { rollout: Rollout },
  step: (rollout: Rollout) => RolloutStepResult,
  write: (command: RolloutCommand, result: RolloutStepResult) => Generator<Write>,
): Generator<Write | "status"> {
  let local = stored.rollout;
  for (let round = 1; round <= 3; round++) {
    const result = step(local);
    if (result.commands.length > 0 && round < 3) {
      for (const command of result.commands) yield* write(command, result);
      local = { ...stored.rollout, status: result.desired.status };
      continue;
    }
    stored.rollout = { ...stored.rollout, status: result.desired.status };
    yield "status";
    return;
  }
}

/**
 * Runs a reconcile until its `killAfter`-th write (undefined: to its end), as kill -9 would stop it there: the writes
 * it made, in order, and whether it was killed (the rest of it never happens).
 */
export function killedAfter<Write>(
  reconcile: Iterable<Write>,
  killAfter: number | undefined,
): { writes: Write[]; killed: boolean } {
  const writes: Write[] = [];
  for (const write of reconcile) {
    writes.push(write);
    if (killAfter !== undefined && writes.length >= killAfter) return { writes, killed: true };
  }
  return { writes, killed: false };
}
