/** The pool plan case by case: refill, adopt, shrink, release on a Cluster's going, let go once it holds its member. */
import { describe, expect, it } from "vitest";
import type { PoolMemberObservation } from "../../../../src/api/backend-contract.ts";
import type { ClusterPool, PoolMember } from "../../../../src/api/cluster-pool.ts";
import { ENGINE_API_VERSION } from "../../../../src/api/constants.ts";
import { claimOperations, idleMember } from "../../../../src/machines/cluster-pool/claim.ts";
import { type PoolPlanInput, planPool } from "../../../../src/machines/cluster-pool/plan.ts";

const V = "1.33.3";
const pool = (members: PoolMember[], idle = 2, awake?: number): ClusterPool => ({
  apiVersion: ENGINE_API_VERSION,
  kind: "ClusterPool",
  metadata: { name: "warm", generation: 1 },
  spec: { providerConfig: "small", idle, ...(awake === undefined ? {} : { awake }) },
  status: { members },
});
const ready = (id: string, boundTo?: string): PoolMemberObservation => ({
  id,
  pool: "warm",
  version: V,
  observation: { exists: true, phase: "ready", version: V, endpoint: "https://x:6443" },
  ...(boundTo ? { boundTo } : {}),
});
const inPhase = (id: string, phase: "hibernating" | "hibernated" | "waking"): PoolMemberObservation => ({
  id,
  pool: "warm",
  version: V,
  observation: { exists: true, phase, version: V },
});
const member = (id: string, phase: PoolMember["phase"], claimedBy?: string): PoolMember => ({
  id,
  version: V,
  phase,
  ...(claimedBy ? { claimedBy: { namespace: "ns", name: claimedBy, uid: claimedBy } } : {}),
});
const CAN_SLEEP = { offered: true, backend: "simulated" } as const;
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

describe("a sleeping pool (spec.awake)", () => {
  it("keeps the first awake and records the rest going to sleep before ordering it", () => {
    const members = [member("a", "Ready"), member("b", "Ready"), member("c", "Ready")];
    const result = plan({
      pool: pool(members, 3, 1),
      backend: [ready("a"), ready("b"), ready("c")],
      sleep: CAN_SLEEP,
    });
    expect(result.hibernate).toEqual(["c", "b"]);
    expect(result.wake).toEqual([]);
    expect(result.status.members?.map((m) => [m.id, m.phase])).toEqual([
      ["a", "Ready"],
      ["b", "Hibernating"],
      ["c", "Hibernating"],
    ]);
    expect(result.status).toMatchObject({ idle: 1, hibernating: 2, asleep: 0, waking: 0, refilling: 0 });
    expect(result.status.conditions?.find((c) => c.type === "Ready")).toMatchObject({ status: "True" });
    expect(result.status.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "True",
      reason: "Hibernated",
    });
  });

  it("wakes an asleep member when the awake one was taken, and leaves the claimed one to its Cluster", () => {
    const members = [member("a", "Ready", "x"), member("b", "Hibernated"), member("c", "Hibernated")];
    const result = plan({
      pool: pool(members, 2, 1),
      backend: [inPhase("a", "hibernated"), inPhase("b", "hibernated"), inPhase("c", "hibernated")],
      claimers: new Map([["x", "binding"]]),
      sleep: CAN_SLEEP,
    });
    expect(result.wake).toEqual(["b"]);
    expect(result.hibernate).toEqual([]);
    expect(result.status.members?.map((m) => [m.id, m.phase])).toEqual([
      ["a", "Hibernated"],
      ["b", "Waking"],
      ["c", "Hibernated"],
    ]);
    expect(result.status).toMatchObject({ idle: 0, waking: 1, asleep: 1, binding: 1 });
    expect(result.status.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Refilling",
    });
  });

  it("wakes a member going to sleep only once it is asleep, and sends a new one to sleep only once it is Ready", () => {
    const members = [member("a", "Hibernating"), member("b", "Provisioning")];
    const going = plan({
      pool: pool(members, 2, 1),
      backend: [inPhase("a", "hibernating"), { ...ready("b"), observation: { exists: false } }],
      sleep: CAN_SLEEP,
    });
    expect([going.wake, going.hibernate]).toEqual([[], []]);
    const later = plan({
      pool: pool([member("a", "Hibernated"), member("b", "Ready"), member("c", "Ready")], 3, 1),
      backend: [inPhase("a", "hibernated"), ready("b"), ready("c")],
      sleep: CAN_SLEEP,
    });
    expect([later.wake, later.hibernate]).toEqual([[], ["c"]]);
  });

  it("wakes every sleeping member once spec.awake is removed, and says so where it said otherwise", () => {
    const asked = plan({
      pool: pool([member("a", "Ready"), member("b", "Ready")], 2, 0),
      backend: [ready("a"), ready("b")],
      sleep: CAN_SLEEP,
    });
    expect(asked.hibernate).toEqual(["b", "a"]);
    const removed: ClusterPool = {
      ...pool([member("a", "Hibernated"), member("b", "Hibernated")], 2),
      status: { ...asked.status, members: [member("a", "Hibernated"), member("b", "Hibernated")] },
    };
    const result = plan({
      pool: removed,
      backend: [inPhase("a", "hibernated"), inPhase("b", "hibernated")],
      sleep: CAN_SLEEP,
    });
    expect(result.wake).toEqual(["a", "b"]);
    expect(result.status.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "True",
      reason: "Awake",
    });
  });

  it("on a backend that cannot sleep: every member awake, nothing ordered, the Hibernation condition says why", () => {
    const result = plan({
      pool: pool([member("a", "Ready"), member("b", "Ready")], 2, 1),
      backend: [ready("a"), ready("b")],
      sleep: { offered: false, backend: "existing" },
    });
    expect([result.wake, result.hibernate]).toEqual([[], []]);
    expect(result.status.idle).toBe(2);
    expect(result.status.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "False",
      reason: "HibernationNotOffered",
      message: expect.stringContaining("backend existing cannot put clusters to sleep"),
    });
    expect(result.status.conditions?.find((c) => c.type === "Ready")).toMatchObject({ status: "True" });
  });

  it("shows a failed hibernate or wake in the Hibernation condition", () => {
    const result = plan({
      pool: pool([member("a", "Ready")], 1, 1),
      backend: [ready("a")],
      sleep: { ...CAN_SLEEP, error: "wake pool-1: no such cluster" },
    });
    expect(result.status.conditions?.find((c) => c.type === "Hibernation")).toMatchObject({
      status: "False",
      reason: "SleepFailed",
      message: expect.stringContaining("no such cluster"),
    });
  });

  it("shows no sleep counts nor Hibernation condition on a pool that never asked for sleep", () => {
    const result = plan({ pool: pool([member("a", "Ready")], 1), backend: [ready("a")], sleep: CAN_SLEEP });
    expect(result.status).not.toHaveProperty("asleep");
    expect(result.status.conditions?.map((c) => c.type)).toEqual(["Ready", "Refilled"]);
  });
});

describe("claims", () => {
  it("prefer an awake member of any pool, then a waking one, then one asleep; never one going to sleep", () => {
    const first = pool([member("h1", "Hibernated"), member("g1", "Hibernating")]);
    const second: ClusterPool = {
      ...pool([member("w2", "Waking"), member("r2", "Ready")]),
      metadata: { name: "second" },
    };
    expect(idleMember([first, second], "small", V)?.member.id).toBe("r2");
    expect(idleMember([first, pool([member("w2", "Waking")])], "small", V)?.member.id).toBe("w2");
    expect(idleMember([first], "small", V)?.member.id).toBe("h1");
    expect(idleMember([pool([member("g1", "Hibernating")])], "small", V)).toBeUndefined();
    // A Cluster that asks to sleep is given an awake member or none.
    expect(idleMember([first], "small", V, true)).toBeUndefined();
    expect(idleMember([first, second], "small", V, true)?.member.id).toBe("r2");
  });

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
