/** The write-loop guard: counts writes per object and writer, holds a looping one back (longer each time), tells once per hold. */
import { describe, expect, it } from "vitest";
import { heldBackFor, WriteLoopError } from "../../../../src/runtime/controllers/errors.ts";
import { asWriter, WriteLoopGuard } from "../../../../src/runtime/controllers/write-loop-guard.ts";
import type { EventRecord, EventSubject } from "../../../../src/runtime/event-recorder.ts";
import { silentLogger } from "../../../../src/runtime/logger.ts";
import { EngineMetrics } from "../../../../src/runtime/metrics.ts";
import { FakeClock } from "../../../support/fake-clock.ts";

const LIMITS = { maxWrites: 5, windowMs: 1_000, holdMs: 2_000, maxHoldMs: 8_000 };
const profile = {
  group: "clusters.openmcp.cloud",
  version: "v1alpha1",
  plural: "clusterprofiles",
  name: "test.alpha.fight",
  uid: "3f0c",
};

function guarded() {
  const clock = new FakeClock(1_000_000);
  const metrics = new EngineMetrics();
  const events: Array<{ subject: EventSubject; event: EventRecord }> = [];
  const guard = new WriteLoopGuard({
    clock,
    log: silentLogger,
    metrics,
    providerName: "alpha",
    limits: LIMITS,
    sendEvent: (subject, event) => events.push({ subject, event }),
  });
  /** Whether a write of `object` (by the reconcile of `key`, if given) is let through. */
  const write = async (object = profile, key?: string): Promise<boolean> => {
    try {
      if (key === undefined) guard.enter(object);
      else await asWriter({ controller: "profile", key }, async () => guard.enter(object));
      return true;
    } catch (error) {
      if (error instanceof WriteLoopError) return false;
      throw error;
    }
  };
  const counter = async (name: string) =>
    (await metrics.registry.getMetricsAsJSON())
      .find((metric) => metric.name === name)
      ?.values.reduce((sum, value) => sum + value.value, 0) ?? 0;
  return { clock, guard, events, write, counter };
}

describe("WriteLoopGuard", () => {
  it("lets maxWrites writes of one object through within the window, and holds back the next", async () => {
    const { write, events, counter } = guarded();
    for (let i = 0; i < LIMITS.maxWrites; i++) expect(await write()).toBe(true);

    expect(await write()).toBe(false);
    expect(await counter("openmcp_engine_object_writes_total")).toBe(LIMITS.maxWrites);
    expect(await counter("openmcp_engine_write_loops_total")).toBe(1);
    expect(events).toEqual([
      {
        subject: {
          apiVersion: "clusters.openmcp.cloud/v1alpha1",
          kind: "ClusterProfile",
          metadata: { name: "test.alpha.fight", uid: "3f0c" },
        },
        event: expect.objectContaining({ type: "Warning", reason: "WriteLoop" }),
      },
    ]);
    expect(events[0]?.event.message).toContain("by provider alpha");
  });

  it("refuses every write while held, telling the loop once, and names how long is left", async () => {
    const { clock, guard, write, events, counter } = guarded();
    for (let i = 0; i <= LIMITS.maxWrites; i++) await write();
    clock.advance(500);

    const refused = (() => {
      try {
        guard.enter(profile);
      } catch (error) {
        return error;
      }
    })();
    expect(heldBackFor(refused)).toBe(LIMITS.holdMs - 500);
    expect(heldBackFor(new Error("wrapped", { cause: refused }))).toBe(LIMITS.holdMs - 500);
    expect(heldBackFor(new Error("something else"))).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(await counter("openmcp_engine_write_loops_total")).toBe(1);
    expect(await counter("openmcp_engine_writes_held_back_total")).toBe(2);
  });

  it("lets writes through again after the hold, and doubles the hold of a loop that comes back, up to maxHoldMs", async () => {
    const { clock, guard, write } = guarded();
    const holds: Array<number | undefined> = [];
    for (let loop = 0; loop < 5; loop++) {
      for (let i = 0; i < LIMITS.maxWrites; i++) expect(await write()).toBe(true);
      try {
        guard.enter(profile);
      } catch (error) {
        holds.push(heldBackFor(error));
      }
      clock.advance((holds.at(-1) ?? 0) - 1);
      expect(await write(), "a write 1 ms before the hold ends").toBe(false);
      clock.advance(1);
    }

    expect(holds).toEqual([2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it("starts over at the first hold once a loop lies long enough back", async () => {
    const { clock, write, guard } = guarded();
    for (let i = 0; i <= LIMITS.maxWrites; i++) await write();
    clock.advance(LIMITS.maxHoldMs * 2 + 1);
    for (let i = 0; i < LIMITS.maxWrites; i++) await write();

    try {
      guard.enter(profile);
      expect.unreachable("the write should be refused");
    } catch (error) {
      expect(heldBackFor(error)).toBe(LIMITS.holdMs);
    }
  });

  it("never holds back writes spread out below the limit, however many there are", async () => {
    const { clock, write, counter } = guarded();
    for (let i = 0; i < 1_000; i++) {
      expect(await write()).toBe(true);
      clock.advance(LIMITS.windowMs / LIMITS.maxWrites);
    }
    expect(await counter("openmcp_engine_write_loops_total")).toBe(0);
  });

  it("counts each writer of one object on its own: many reconciles may write one object in a burst", async () => {
    const { write } = guarded();
    for (let request = 0; request < 50; request++) {
      expect(await write(profile, `request-${request}`)).toBe(true);
    }
    for (let i = 1; i < LIMITS.maxWrites; i++) expect(await write(profile, "request-0")).toBe(true);

    expect(await write(profile, "request-0")).toBe(false);
    expect(await write(profile, "request-1")).toBe(true);
  });

  it("counts objects apart", async () => {
    const { write } = guarded();
    for (let i = 0; i < LIMITS.maxWrites; i++) await write();
    const other = { ...profile, name: "test.alpha.other" };

    expect(await write(other)).toBe(true);
    expect(await write()).toBe(false);
  });
});
