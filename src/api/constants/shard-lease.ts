/** Constants of a sharded replica's membership Lease: its label and annotation. */

import { ENGINE_GROUP } from "../constants.ts";

/** Labels on a sharded replica's membership Lease. */
export const SHARD_LEASE_LABELS = {
  /** On a sharded replica's membership Lease: the ring it belongs to (the provider's name). */
  shardRing: `${ENGINE_GROUP}/shard-ring`,
} as const;

/** Annotations on a sharded replica's membership Lease. */
export const SHARD_LEASE_ANNOTATIONS = {
  /** On a sharded replica's membership Lease: the members (comma-separated) it has acknowledged and works by. */
  shardMembers: `${ENGINE_GROUP}/shard-members`,
} as const;
