/**
 * ClusterSnapshots on a world's API server, as the snapshot tests make, read and wait for them; imported as a whole
 * (`import * as snapshots`), so that a test reads `snapshots.create(world, …)`, `snapshots.where(world, …)`.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { ClusterSpec } from "../../src/api/cluster.ts";
import type { ClusterSnapshot } from "../../src/api/cluster-snapshot.ts";
import {
  CLUSTER_SNAPSHOT_API_VERSION,
  CLUSTER_SNAPSHOT_KIND,
  CLUSTER_SNAPSHOT_RESOURCE,
  RESTORE_ANNOTATION,
  RESTORE_FROM_ANNOTATION,
} from "../../src/api/constants/cluster-snapshot.ts";
import { eventually, satisfying } from "./eventually.ts";
import type { World } from "./world.ts";

/** The world's API server and the namespace its objects are made in. */
type On = Pick<World, "custom" | "namespace">;

/** ClusterSnapshot `name` of Cluster `cluster`, kept in `storage` (absent: the engine's default folder). */
export const aClusterSnapshot = (name: string, cluster: string, storage?: object) => ({
  apiVersion: CLUSTER_SNAPSHOT_API_VERSION,
  kind: CLUSTER_SNAPSHOT_KIND,
  metadata: { name },
  spec: { cluster: { name: cluster }, ...(storage ? { storage } : {}) },
});

/** Makes ClusterSnapshot `name` of Cluster `cluster` in the world's namespace. */
export const create = (world: On, name: string, cluster: string, storage?: object) =>
  world.custom.createNamespacedCustomObject({
    ...CLUSTER_SNAPSHOT_RESOURCE,
    namespace: world.namespace,
    body: aClusterSnapshot(name, cluster, storage),
  });

/** Makes Cluster `name` from ClusterSnapshot `snapshot` (its restore-from annotation), with `spec`. */
export const createClone = (
  world: Pick<World, "createCluster">,
  name: string,
  snapshot: string,
  spec: Partial<ClusterSpec> = {},
) => world.createCluster(name, spec, { annotations: { [RESTORE_FROM_ANNOTATION]: snapshot } });

/** Asks ClusterSnapshot `name` to roll its Cluster back, once for `request` (its restore annotation). */
export const askRestore = (world: On, name: string, request: string) =>
  world.custom.patchNamespacedCustomObject(
    {
      ...CLUSTER_SNAPSHOT_RESOURCE,
      namespace: world.namespace,
      name,
      body: { metadata: { annotations: { [RESTORE_ANNOTATION]: request } } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );

/** ClusterSnapshot `name` of the world's namespace, as the API server has it now. */
export const read = async (world: On, name: string) =>
  (await world.custom.getNamespacedCustomObject({
    ...CLUSTER_SNAPSHOT_RESOURCE,
    namespace: world.namespace,
    name,
  })) as ClusterSnapshot;

/** ClusterSnapshot `name`, once `wanted` holds for it. */
export const where = (
  world: On,
  name: string,
  wanted: (snapshot: ClusterSnapshot) => boolean,
  timeoutMs = 180_000,
) =>
  eventually(async () => satisfying(await read(world, name), wanted), {
    what: `ClusterSnapshot ${name}: ${String(wanted)}`,
    timeoutMs,
    intervalMs: 250,
  });
