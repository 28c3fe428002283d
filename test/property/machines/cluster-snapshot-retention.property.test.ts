/**
 * A ClusterSnapshot's deletion against its store, at random: a person deletes it at any point (or gives the data up by
 * removing the finalizer), Clusters start and stop being made from it, the store goes down and up, and the engine's
 * steps (the pure step, its commands run as the runtime runs them, a failing command retried) come in between.
 *
 * Invariants after every step: the object is never gone while its data is in the store, unless a person removed the
 * finalizer; the data is never removed while a Cluster is being made from it, nor before the deletion was asked.
 * Settled (store up, no Cluster being made): a deleted snapshot is gone, and its data with it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterSnapshot } from "../../../src/api/cluster-snapshot.ts";
import type { SnapshotManifest } from "../../../src/api/control-plane-snapshot.ts";
import { SNAPSHOT_FINALIZER, stepClusterSnapshot } from "../../../src/machines/cluster-snapshot/step.ts";

const MANIFEST: SnapshotManifest = {
  format: 1,
  backend: "local",
  cluster: { uid: "c", namespace: "team", name: "source" },
  kubernetesVersion: "1.36.3",
  takenAt: "2026-01-01T00:00:00Z",
  files: [],
  size: 1,
  checksum: "sha256:1",
};

type Operation = "step" | "delete" | "giveUp" | "cloneStarts" | "cloneMade" | "storeDown" | "storeUp";

interface World {
  object: ClusterSnapshot | undefined;
  data: boolean;
  taken?: SnapshotManifest;
  removed: boolean;
  storeUp: boolean;
  usedBy: string[];
  lastError?: string;
  gaveUp: boolean;
}

/** One reconcile as the runtime does it: step, metadata and commands, then the status; a failed command is retried. */
function reconcile(world: World, seen: Set<string>): void {
  const object = world.object;
  if (!object) return;
  const result = stepClusterSnapshot({
    object,
    cluster: { found: true, uid: "c", ready: true },
    root: "/snapshots",
    ...(world.taken ? { taken: world.taken } : {}),
    removed: world.removed,
    usedBy: world.usedBy,
    now: "2026-01-01T00:01:00Z",
    ...(world.lastError ? { lastError: world.lastError } : {}),
  });
  seen.add(result.state);
  let next: ClusterSnapshot = { ...object, metadata: result.desired.metadata };
  for (const command of result.commands) {
    if (command.kind === "remove" && world.usedBy.length > 0)
      throw new Error("removed while a Cluster is made from it");
    if (command.kind === "remove" && !object.metadata.deletionTimestamp)
      throw new Error("removed before deletion");
    if (!world.storeUp) {
      world.lastError = "the store does not answer";
      seen.add("failed-command");
      world.object = next;
      return;
    }
    if (command.kind === "snapshot") {
      world.data = true;
      world.taken = MANIFEST;
    } else if (command.kind === "remove") {
      world.data = false;
      world.removed = true;
    }
  }
  delete world.lastError;
  next = { ...next, status: result.desired.status };
  // Deleted and no finalizer left: the API server removes the object.
  world.object =
    next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 ? undefined : next;
}

function apply(world: World, operation: Operation, seen: Set<string>): void {
  const object = world.object;
  switch (operation) {
    case "step":
      reconcile(world, seen);
      return;
    case "delete":
      if (!object) return;
      if ((object.metadata.finalizers ?? []).length === 0) world.object = undefined;
      else
        world.object = {
          ...object,
          metadata: { ...object.metadata, deletionTimestamp: "2026-01-01T00:02:00Z" },
        };
      return;
    case "giveUp":
      if (!object?.metadata.deletionTimestamp) return;
      world.gaveUp = true;
      world.object = undefined;
      return;
    case "cloneStarts":
      world.usedBy = ["clone"];
      return;
    case "cloneMade":
      world.usedBy = [];
      return;
    case "storeDown":
      world.storeUp = false;
      return;
    case "storeUp":
      world.storeUp = true;
  }
}

describe("a ClusterSnapshot's deletion", () => {
  it("never lets the object go while its data is left (unless given up), nor removes it under a clone", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom<Operation>(
            "step",
            "step",
            "step",
            "delete",
            "giveUp",
            "cloneStarts",
            "cloneMade",
            "storeDown",
            "storeUp",
          ),
          // Histories of any length up to 40: the default size keeps them near 10 operations, which hold a
          // deletion for a clone (deleting.held) in only a few of the 300 runs.
          { maxLength: 40, size: "max" },
        ),
        (operations) => {
          const world: World = {
            object: {
              apiVersion: "engine.openmcp.cloud/v1alpha1",
              kind: "ClusterSnapshot",
              metadata: { name: "before", namespace: "team", uid: "s", generation: 1 },
              spec: { cluster: { name: "source" } },
            },
            data: false,
            removed: false,
            storeUp: true,
            usedBy: [],
            gaveUp: false,
          };
          for (const operation of operations) {
            apply(world, operation, seen);
            if (world.object === undefined && world.data && !world.gaveUp) return false;
          }
          // Settle: the store answers, no Cluster is made from it, the engine looks until nothing changes.
          const deleted = world.object?.metadata.deletionTimestamp !== undefined;
          world.storeUp = true;
          world.usedBy = [];
          for (let i = 0; i < 6; i++) reconcile(world, seen);
          if (world.gaveUp) return true;
          if (deleted) return world.object === undefined && !world.data;
          return world.object !== undefined || !world.data;
        },
      ),
      { numRuns: 300 },
    );
    // The interesting branches were reached: held for a clone, a removal the store refused, a snapshot made whole.
    for (const branch of [
      "deleting.held",
      "deleting.removing",
      "deleting.released",
      "failed-command",
      "complete",
    ])
      expect(seen, branch).toContain(branch);
  });

  it("sets its finalizer before the snapshot is written", () => {
    const result = stepClusterSnapshot({
      object: {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "ClusterSnapshot",
        metadata: { name: "before", namespace: "team", uid: "s" },
        spec: { cluster: { name: "source" } },
      },
      cluster: { found: true, uid: "c", ready: true },
      root: "/snapshots",
      now: "2026-01-01T00:01:00Z",
    });
    expect(result.commands.map((command) => command.kind)).toEqual(["snapshot"]);
    expect(result.desired.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
  });
});
