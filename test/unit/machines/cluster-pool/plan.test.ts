/** The pool plan case by case: refill, adopt, shrink, release on a Cluster's going, let go once it holds its member. */
import { describe, expect, it } from "vitest";
import type { PoolMemberObservation } from "../../../../src/api/backend-contract.ts";
import type { ClusterPool, PoolMember } from "../../../../src/api/cluster-pool.ts";
import { ENGINE_API_VERSION } from "../../../../src/api/constants.ts";
import { claimOperations, idleMember } from "../../../../src/machines/cluster-pool/claim.ts";
import { type PoolPlanInput, planPool } from "../../../../src/machines/cluster-pool/plan.ts";

const V = "1.33.3";
const pool = (members: PoolMember[], idle = 2): ClusterPool => ({
  apiVersion: ENGINE_API_VERSION,
  kind: "ClusterPool",
  metadata: { name: "warm", generation: 1 },
  spec: { providerConfig: "small", idle },
  status: { members },
});
const ready = (id: string, boundTo?: string): PoolMemberObservation => ({
  id,
  pool: "warm",
  version: V,
  observation: { exists: true, phase: "ready", version: V, endpoint: "https://x:6443" },
  ...(boundTo ? { boundTo } : {}),
});
const plan = (input: Partial<PoolPlanInput> & Pick<PoolPlanInput, "pool">) =>
  planPool({
    versions: [V],
    backend: [],
    claimers: new Map(),
    freshIds: ["n1", "n2", "n3"],
    now: "2026-11-26T12:00:00Z",
    ...input,
  });

describe("planPool", () => {
  it("records new members before they are made, up to idle", () => {
    const result = plan({ pool: pool([]) });
    expect(result.create.map((m) => m.id)).toEqual(["n1", "n2"]);
    expect(result.status.members?.map((m) => [m.id, m.phase])).toEqual([
      ["n1", "Provisioning"],
      ["n2", "Provisioning"],
    ]);
    expect(result.status.refilling).toBe(2);
  });

  it("adopts a member the backend holds but the record lacks (a crash between make and record)", () => {
    const result = plan({ pool: pool([], 1), backend: [ready("old")] });
    expect(result.create).toEqual([]);
    expect(result.status.members).toEqual([{ id: "old", version: V, phase: "Ready" }]);
    expect(result.status.idle).toBe(1);
  });

  it("drops surplus idle members from the record and deletes them when the pool shrinks", () => {
    const members: PoolMember[] = [
      { id: "a", version: V, phase: "Ready" },
      { id: "b", version: V, phase: "Ready" },
    ];
    const result = plan({ pool: pool(members, 1), backend: [ready("a"), ready("b")] });
    expect(result.status.members?.map((m) => m.id)).toEqual(["a"]);
    expect(result.delete).toEqual(["b"]);
  });

  it("keeps a claim while its Cluster binds, deletes the member once the Cluster is gone, lets go once it holds it", () => {
    const claimed = (uid: string): PoolMember => ({
      id: `m-${uid}`,
      version: V,
      phase: "Ready",
      claimedBy: { namespace: "ns", name: uid, uid },
    });
    const members = [claimed("binding"), claimed("gone"), claimed("holds")];
    const result = plan({
      pool: pool(members, 0),
      backend: [ready("m-binding"), ready("m-gone", "gone"), ready("m-holds", "holds")],
      claimers: new Map([
        ["binding", "binding"],
        ["gone", "gone"],
        ["holds", "holds"],
      ]),
    });
    expect(result.status.members?.map((m) => m.id)).toEqual(["m-binding", "m-gone"]);
    expect(result.delete).toEqual(["m-gone"]);
    expect(result.status.binding).toBe(2);
  });

  it("reports a failed member in the Refilled condition and replaces it", () => {
    const failed: PoolMemberObservation = {
      ...ready("f"),
      observation: { exists: true, phase: "failed", version: V, message: "quota exceeded" },
    };
    const result = plan({
      pool: pool([{ id: "f", version: V, phase: "Provisioning" }], 1),
      backend: [failed],
    });
    expect(result.delete).toEqual(["f"]);
    expect(result.create.map((m) => m.id)).toEqual(["n1"]);
    const refilled = result.status.conditions?.find((c) => c.type === "Refilled");
    expect(refilled).toMatchObject({ status: "False", reason: "RefillFailed" });
    expect(refilled?.message).toContain("quota exceeded");
  });
});

describe("claims", () => {
  it("take the first Ready unclaimed member of the version, guarded by a test on its id", () => {
    const members: PoolMember[] = [
      { id: "p", version: V, phase: "Provisioning" },
      { id: "c", version: V, phase: "Ready", claimedBy: { namespace: "ns", name: "x", uid: "x" } },
      { id: "r", version: V, phase: "Ready" },
    ];
    const idle = idleMember([pool(members)], "small", V);
    expect(idle?.member.id).toBe("r");
    expect(idleMember([pool(members)], "small", "1.32.7")).toBeUndefined();
    expect(idleMember([pool(members)], "other", V)).toBeUndefined();
    expect(claimOperations(2, "r", { namespace: "ns", name: "y", uid: "y" })).toEqual([
      { op: "test", path: "/status/members/2/id", value: "r" },
      { op: "add", path: "/status/members/2/claimedBy", value: { namespace: "ns", name: "y", uid: "y" } },
    ]);
  });
});
