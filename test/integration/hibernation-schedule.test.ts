/**
 * HibernationSchedules on a real API server: a start event in the past is applied at once when an engine starts
 * (catch-up) on the selected Clusters only, which really go Hibernated on the simulated backend; a person's
 * "false" after that event stands; an engine started later (its clock past the end event) wakes them at once.
 * The engines read time from an injected clock shifted from the real one, so no test waits real minutes.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/api/clock.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../src/api/constants/hibernation.ts";
import { HIBERNATION_SCHEDULE_RESOURCE } from "../../src/api/constants/hibernation-schedule.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { HibernationSchedule } from "../../src/api/hibernation-schedule.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import type { Engine } from "../../src/runtime/engine.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

/** The real clock shifted by `offsetMs`: timers are real, `now` is later. */
const shifted = (offsetMs: number): Clock => ({
  now: () => systemClock.now() + offsetMs,
  schedule: (callback, ms) => systemClock.schedule(callback, ms),
});

/** A cron firing once a day at the UTC minute of `ms`. */
const dailyAt = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
};

let world: World;
let engine: Engine;
const T0 = Date.now();
const SLEEP_AT = T0 - 60_000; // fired a minute ago
const WAKE_AT = T0 + 10 * 60_000; // fires in ten minutes

const annotationOf = (cluster: Cluster | undefined) => cluster?.metadata.annotations?.[HIBERNATE_ANNOTATION];
const hibernated = (cluster: Cluster | undefined) =>
  cluster?.status?.conditions?.some((c) => c.type === "ClusterReady" && c.reason === "Hibernated") === true;

const readSchedule = async () =>
  (await world.read<HibernationSchedule>(HIBERNATION_SCHEDULE_RESOURCE, "nights")) as HibernationSchedule;

beforeAll(async () => {
  world = await startWorld({
    backend: new SimulatedBackend({ provisionDelayMs: 0, hibernateDelayMs: 300, wakeDelayMs: 300 }),
    engine: false,
  });
  engine = await world.startEngine({ clock: shifted(0) });
  for (const name of ["a", "b"]) await world.createCluster(name, {}, { labels: { idle: "nights" } });
  await world.createCluster("other");
  for (const name of ["a", "b", "other"]) await world.waitFor(name, isReady, 60_000);
});

afterAll(async () => {
  await world?.stop();
});

describe("a HibernationSchedule", () => {
  it("refuses a cron without 5 fields by CEL", async () => {
    await expect(
      world.create(HIBERNATION_SCHEDULE_RESOURCE, {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "HibernationSchedule",
        metadata: { name: "bad" },
        spec: { schedules: [{ start: "0 22 * *" }] },
      }),
    ).rejects.toThrow(/5 fields/);
  });

  it("puts its selected Clusters to sleep at once (the start event passed a minute ago), not the other", async () => {
    await world.create(HIBERNATION_SCHEDULE_RESOURCE, {
      apiVersion: "engine.openmcp.cloud/v1alpha1",
      kind: "HibernationSchedule",
      metadata: { name: "nights" },
      spec: {
        schedules: [{ start: dailyAt(SLEEP_AT), end: dailyAt(WAKE_AT) }],
        selector: { matchLabels: { idle: "nights" } },
      },
    });
    for (const name of ["a", "b"]) await world.waitFor(name, hibernated, 60_000);
    expect(annotationOf(await world.readCluster("other"))).toBeUndefined();
    const schedule = await eventually(
      async () => satisfying(await readSchedule(), (s) => s.status?.lastApplied?.action === "sleep"),
      { what: "lastApplied sleep" },
    );
    expect(schedule?.status).toMatchObject({ selected: 2, nextEvent: { action: "wake" } });
    expect(schedule?.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "Ready", status: "True", reason: "Scheduled" }),
      ]),
    );
  });

  it("leaves a Cluster a person woke after the sleep event awake until the next event", async () => {
    await world.custom.patchNamespacedCustomObject(
      {
        ...RESOURCES.Cluster,
        namespace: world.namespace,
        name: "b",
        body: { metadata: { annotations: { [HIBERNATE_ANNOTATION]: "false" } } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await world.waitFor("b", isReady, 60_000);
    // A reconcile of the schedule (a Cluster change wakes it) writes nothing on b.
    await world.createCluster("c");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(annotationOf(await world.readCluster("b"))).toBe("false");
    expect(annotationOf(await world.readCluster("a"))).toBe("true");
  });

  it("is applied at once by an engine that starts after the end event it missed: the Clusters wake", async () => {
    await engine.stop();
    await world.startEngine({ clock: shifted(WAKE_AT - T0 + 60_000) });
    for (const name of ["a", "b"]) {
      await world.waitFor(name, (c) => annotationOf(c) === "false" && isReady(c), 60_000);
    }
    const schedule = await eventually(
      async () => satisfying(await readSchedule(), (s) => s.status?.lastApplied?.action === "wake"),
      { what: "lastApplied wake" },
    );
    expect(schedule?.status?.nextEvent?.action).toBe("sleep");
    expect(annotationOf(await world.readCluster("other"))).toBeUndefined();
  });
});
