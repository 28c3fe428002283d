import { describe, expect, it } from "vitest";
import type { ClusterPoolStatus } from "../../../../src/api/cluster-pool.ts";
import { poolSummary, withPoolSummary } from "../../../../src/machines/cluster-pool/config-summary.ts";
import { POOL_CONDITIONS, POOL_REASONS } from "../../../../src/machines/cluster-pool/plan.ts";

const at = "2026-11-27T00:00:00Z";
const condition = (type: string, status: "True" | "False", reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: at,
});

describe("a pool as its ProviderConfig shows it", () => {
  it("counts, Ready and no message when the pool is full", () => {
    const status: ClusterPoolStatus = {
      idle: 2,
      binding: 1,
      refilling: 0,
      conditions: [
        condition(POOL_CONDITIONS.ready, "True", POOL_REASONS.full, "2 idle cluster(s) of Kubernetes 1.36.3"),
        condition(POOL_CONDITIONS.refilled, "True", POOL_REASONS.refilled, "refilled"),
      ],
    };
    expect(poolSummary(status)).toEqual({ idle: 2, binding: 1, refilling: 0, ready: true });
  });

  it("counts a sleeping pool's idle clusters not awake as asleep", () => {
    const status: ClusterPoolStatus = {
      idle: 1,
      asleep: 3,
      hibernating: 1,
      waking: 1,
      binding: 0,
      refilling: 0,
      conditions: [condition(POOL_CONDITIONS.ready, "True", POOL_REASONS.full, "full")],
    };
    expect(poolSummary(status)).toEqual({ idle: 1, asleep: 5, binding: 0, refilling: 0, ready: true });
  });

  it("says why refilling fails before why it is not full: that is what a person acts on", () => {
    const status: ClusterPoolStatus = {
      idle: 0,
      refilling: 2,
      conditions: [
        condition(
          POOL_CONDITIONS.ready,
          "False",
          POOL_REASONS.refilling,
          "0 of 2 idle cluster(s) ready, 2 being made",
        ),
        condition(
          POOL_CONDITIONS.refilled,
          "False",
          POOL_REASONS.refillFailed,
          "making pool clusters failed: quota",
        ),
      ],
    };
    expect(poolSummary(status)).toEqual({
      idle: 0,
      binding: 0,
      refilling: 2,
      ready: false,
      message: "making pool clusters failed: quota",
    });
    const notFull = { ...status, conditions: status.conditions?.slice(0, 1) };
    expect(poolSummary(notFull).message).toBe("0 of 2 idle cluster(s) ready, 2 being made");
  });

  it("a pool never seen yet: nothing ready, zero counts", () => {
    expect(poolSummary(undefined)).toEqual({ idle: 0, binding: 0, refilling: 0, ready: false });
  });

  it("sets one pool's line, keeps the others and the rest of the status, and removes the line when the pool goes", () => {
    const line = { idle: 1, binding: 0, refilling: 1, ready: false };
    const other = { idle: 3, binding: 0, refilling: 0, ready: true };
    const status = { observedGeneration: 4, profileName: "p", pools: { other } };
    const shown = withPoolSummary(status, "warm", line);
    expect(shown).toEqual({ observedGeneration: 4, profileName: "p", pools: { other, warm: line } });
    expect(withPoolSummary(shown, "warm", undefined)).toEqual(status);
    expect(withPoolSummary(withPoolSummary(undefined, "warm", line), "warm", undefined)).toEqual({});
  });
});
