/**
 * Rollouts of a test's world on a real API server: made as a user applies them, read as stored, and waited for, all
 * in the world's namespace.
 */
import { ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import type { Rollout, RolloutSpec } from "../../src/api/rollout.ts";
import type { ExtraEngineOptions, World } from "./world.ts";

/** The engine options of a world whose Rollouts are looked at again within 200 ms, a failure retried after 500 ms. */
export const FAST_ROLLOUTS: ExtraEngineOptions = {
  kindSettings: { Rollout: { timing: { pollMs: 200, retryMs: 500, resyncMs: 60_000 } } },
};

/** Creates Rollout `name` with `spec` in the world's namespace, as a user applies it. */
export const createRollout = (world: Pick<World, "create">, name: string, spec: RolloutSpec) =>
  world.create(ROLLOUT_RESOURCE, {
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "Rollout",
    metadata: { name },
    spec,
  });

/** Rollout `name` of the world's namespace as stored (rejected while there is none). */
export async function readRollout(world: Pick<World, "read">, name: string): Promise<Rollout> {
  const rollout = await world.read<Rollout>(ROLLOUT_RESOURCE, name);
  if (!rollout) throw new Error(`there is no Rollout ${name}`);
  return rollout;
}

/** Waits until Rollout `name` `holds` (`what` names that in the failure), and resolves to it as then stored. */
export const rolloutWhere = async (
  world: Pick<World, "waitForObject">,
  name: string,
  what: string,
  holds: (rollout: Rollout) => boolean,
  timeoutMs = 60_000,
) =>
  (await world.waitForObject<Rollout>(
    ROLLOUT_RESOURCE,
    name,
    (rollout) => rollout !== undefined && holds(rollout),
    {
      what,
      timeoutMs,
    },
  )) as Rollout;
