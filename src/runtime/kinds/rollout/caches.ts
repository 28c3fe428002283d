/** The Rollout kind's cache: other kinds read it too (a Cluster's settings depend on the settings run that reached it). */
import type { Rollout } from "../../../api/rollout.ts";
import { ROLLOUT_DEFINITION } from "../../../machines/rollout/definition.ts";
import { definitionCache } from "../../informers.ts";

/** The cache of Rollouts. */
export const ROLLOUTS = definitionCache<Rollout>(ROLLOUT_DEFINITION);
