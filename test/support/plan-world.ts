/**
 * A world that `openmcp-engine plan` is run against, on the simulated backend: the world, a temporary folder of the
 * test (the simulated backend's `--state-dir`, and files the test writes), and `plan`'s flags for them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorld, type World, type WorldOptions } from "./world.ts";

export interface PlanWorld {
  readonly world: World;
  /** The test's temporary folder: `--state-dir`, and where it writes its files. */
  readonly state: string;
  /** `plan`'s flags for this world: its API server, provider and the simulated backend's state. */
  readonly engineArgs: string[];
}

/**
 * A temporary folder named `<prefix>…`, a world started with `options(folder)`, and `plan`'s flags for them in
 * environment `test` on the simulated backend, then `more`. The folder is removed again if the world does not start.
 */
export async function startPlanWorld(
  prefix: string,
  options: (state: string) => WorldOptions,
  ...more: readonly string[]
): Promise<PlanWorld> {
  const state = await mkdtemp(join(tmpdir(), prefix));
  try {
    const world = await startWorld(options(state));
    const engineArgs = [
      "--kubeconfig",
      world.controlPlane.kubeconfigPath,
      "--provider-name",
      world.provider,
      "--environment",
      "test",
      "--backend",
      "simulated",
      "--state-dir",
      state,
      ...more,
    ];
    return { world, state, engineArgs };
  } catch (error) {
    await rm(state, { recursive: true, force: true });
    throw error;
  }
}

/** Stops what {@link startPlanWorld} started (as far as it got) and removes its folder. */
export async function stopPlanWorld(started: Partial<PlanWorld>): Promise<void> {
  await started.world?.stop();
  if (started.state) await rm(started.state, { recursive: true, force: true });
}
