/** The HibernationSchedule step: validation as a condition, catch-up, applied once, selection, Events. */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { HibernationSchedule } from "../../../../src/api/hibernation-schedule.ts";
import { stepHibernationSchedule } from "../../../../src/machines/hibernation-schedule/step.ts";
import { timetableProblems } from "../../../../src/machines/hibernation-schedule/timetable.ts";
import { namesShown } from "../../../../src/machines/shared/names-shown.ts";

const NOW = Date.parse("2025-06-02T12:00:30Z"); // a Monday
const timing = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };

const schedule = (spec: Partial<HibernationSchedule["spec"]>, status?: HibernationSchedule["status"]) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "HibernationSchedule",
    metadata: { name: "nights", namespace: "team", uid: "u1", generation: 1 },
    spec: { schedules: [{ start: "0 12 * * *", end: "0 13 * * *" }], ...spec },
    ...(status ? { status } : {}),
  }) as HibernationSchedule;

const cluster = (name: string, labels: Record<string, string> = {}, extra: Partial<Cluster["spec"]> = {}) =>
  ({
    metadata: { name, namespace: "team", labels },
    spec: { profile: "p", tenancy: "Exclusive", ...extra },
  }) as Cluster;

const step = (
  object: HibernationSchedule,
  clusters: Cluster[],
  written?: Parameters<typeof stepHibernationSchedule>[0]["written"],
) =>
  stepHibernationSchedule({
    object,
    clusters,
    ...(written ? { written } : {}),
    now: "2025-06-02T12:00:30Z",
    nowMs: NOW,
    timing,
  });

describe("a HibernationSchedule step", () => {
  it("catches up with the latest event at once: annotates every selected Cluster, not the others", () => {
    const result = step(schedule({ selector: { matchLabels: { idle: "nights" } } }), [
      cluster("a", { idle: "nights" }),
      cluster("b", { idle: "nights" }),
      cluster("c"),
    ]);
    expect(result.state).toBe("applying");
    expect(result.commands).toEqual([
      { kind: "annotate", action: "sleep", time: "2025-06-02T12:00:00Z", clusters: ["a", "b"] },
    ]);
    expect(result.desired.status).toMatchObject({
      selected: 2,
      nextEvent: { action: "wake", time: "2025-06-02T13:00:00Z" },
    });
    expect(result.desired.status?.lastApplied).toBeUndefined();
  });

  it("records lastApplied and one Event once written, then rests until the next event", () => {
    const first = step(schedule({}), [cluster("a"), cluster("b")]);
    const applying = schedule({}, first.desired.status);
    const written = { action: "sleep" as const, time: "2025-06-02T12:00:00Z", clusters: ["a", "b"] };
    const done = step(applying, [cluster("a"), cluster("b")], written);
    expect(done.state).toBe("scheduled");
    expect(done.commands).toEqual([]);
    expect(done.desired.status?.lastApplied).toEqual({ action: "sleep", time: "2025-06-02T12:00:00Z" });
    expect(done.events).toEqual([
      expect.objectContaining({
        reason: "PutToSleep",
        message: expect.stringContaining("put 2 Clusters to sleep: a, b"),
      }),
    ]);
    // the requeue is at the next event (13:00, 59.5 minutes away) or the resync (10 minutes), whichever is sooner
    expect(done.requeueAfterMs).toBe(600_000);
    const later = stepHibernationSchedule({
      object: applying,
      clusters: [],
      written,
      now: "2025-06-02T12:00:30Z",
      nowMs: NOW,
      timing: { ...timing, resyncMs: 7_200_000 },
    });
    expect(later.requeueAfterMs).toBe(59.5 * 60_000 + 250);
    // at rest with lastApplied recorded: nothing again (a person's override stands)
    const rest = step(schedule({}, done.desired.status), [cluster("a"), cluster("b")]);
    expect(rest.commands).toEqual([]);
    expect(rest.state).toBe("scheduled");
  });

  it("shows an entry that does not parse as Ready=False InvalidSchedule naming it, and applies nothing", () => {
    const result = step(
      schedule({
        schedules: [
          { start: "0 12 * * *" },
          { end: "61 * * * *", location: "Mars/Base" },
          { start: "0 25 * * *" },
        ],
      }),
      [cluster("a")],
    );
    expect(result.state).toBe("invalid");
    expect(result.commands).toEqual([]);
    const ready = result.desired.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "InvalidSchedule" });
    expect(ready?.message).toContain("schedules[1].location");
    expect(ready?.message).toContain("schedules[2].start");
  });

  it("selects by profiles and purposes too, and skips Clusters being deleted", () => {
    const gone = {
      ...cluster("d"),
      metadata: { ...cluster("d").metadata, deletionTimestamp: "2025-06-02T11:00:00Z" },
    } as Cluster;
    const result = step(schedule({ profiles: ["p"], purposes: ["test"] }), [
      cluster("a", {}, { purposes: ["test"] }),
      cluster("b", {}, { purposes: ["prod"] }),
      cluster("c", {}, { profile: "q", purposes: ["test"] }),
      gone,
    ]);
    expect(result.commands).toEqual([expect.objectContaining({ clusters: ["a"] })]);
  });

  it("truncates Event names after 10", () => {
    const names = Array.from({ length: 13 }, (_, i) => `c${i}`);
    expect(namesShown(names)).toBe("c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 and 3 more");
  });

  it("refuses crons without 5 fields and entries without start or end", () => {
    expect(timetableProblems([{ start: "* * * *" }, {}])).toEqual([
      expect.stringContaining("schedules[0].start"),
      "schedules[1]: needs start or end",
    ]);
  });
});
