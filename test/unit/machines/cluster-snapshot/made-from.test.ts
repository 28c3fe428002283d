/** Which Clusters hold a deleted snapshot: those of its namespace being made from it, until their backend made them. */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { ClusterSnapshot } from "../../../../src/api/cluster-snapshot.ts";
import { isMadeFrom } from "../../../../src/machines/cluster-snapshot/made-from.ts";

const snapshot = { metadata: { name: "before", namespace: "team" } } as ClusterSnapshot;

const cluster = (state: string | undefined, more: Partial<Cluster["metadata"]> = {}) =>
  ({
    metadata: {
      name: "clone",
      namespace: "team",
      annotations: { "engine.openmcp.cloud/restore-from": "before" },
      ...more,
    },
    spec: { profile: "p", tenancy: "Exclusive" },
    ...(state === undefined ? {} : { status: { providerStatus: { state } } }),
  }) as Cluster;

describe("a Cluster being made from a snapshot", () => {
  it.each([undefined, "pending", "claimingPoolMember", "provisioning"])("is one in state %s", (state) => {
    expect(isMadeFrom(cluster(state), snapshot)).toBe(true);
  });

  it.each(["ready", "hibernated", "failed", "deleting.releasing"])(
    "is not one made already (%s)",
    (state) => {
      expect(isMadeFrom(cluster(state), snapshot)).toBe(false);
    },
  );

  it("is not one being deleted, of another namespace, or naming another snapshot or none", () => {
    expect(isMadeFrom(cluster("provisioning", { deletionTimestamp: "2026-01-01T00:00:00Z" }), snapshot)).toBe(
      false,
    );
    expect(isMadeFrom(cluster("provisioning", { namespace: "other" }), snapshot)).toBe(false);
    expect(
      isMadeFrom(
        cluster("provisioning", { annotations: { "engine.openmcp.cloud/restore-from": "x" } }),
        snapshot,
      ),
    ).toBe(false);
    expect(isMadeFrom(cluster("provisioning", { annotations: {} }), snapshot)).toBe(false);
  });
});
