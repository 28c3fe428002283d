/** How `explain` puts a schedule over selected Clusters into words: both schedule kinds through the one explanation. */
import { describe, expect, it } from "vitest";
import type { ClusterSnapshotSchedule } from "../../../../src/api/cluster-snapshot-schedule.ts";
import type { Condition } from "../../../../src/api/common.ts";
import type { HibernationSchedule } from "../../../../src/api/hibernation-schedule.ts";
import { explainClusterSnapshotSchedule } from "../../../../src/machines/cluster-snapshot-schedule/definition.ts";
import { explainHibernationSchedule } from "../../../../src/machines/hibernation-schedule/definition.ts";

const READY: Condition = {
  type: "Ready",
  status: "True",
  reason: "Scheduled",
  message: "fine",
  lastTransitionTime: "2025-06-02T12:00:00Z",
};

const hibernation = (status?: HibernationSchedule["status"]) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "HibernationSchedule",
    metadata: { name: "nights" },
    spec: { schedules: [] },
    ...(status ? { status } : {}),
  }) as HibernationSchedule;

const snapshots = (status?: ClusterSnapshotSchedule["status"]) =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "ClusterSnapshotSchedule",
    metadata: { name: "hourly" },
    spec: { every: "1h", keep: 2 },
    ...(status ? { status } : {}),
  }) as ClusterSnapshotSchedule;

describe("explaining a HibernationSchedule", () => {
  it("says Ready, the last event applied and the count selected, and waits for the next event", () => {
    expect(
      explainHibernationSchedule(
        hibernation({
          state: "scheduled",
          phase: "Scheduled",
          conditions: [READY],
          lastApplied: { action: "sleep", time: "2025-06-02T12:00:00Z" },
          nextEvent: { action: "wake", time: "2025-06-02T13:00:00Z" },
          selected: 3,
        }),
      ),
    ).toEqual({
      state: "scheduled",
      phase: "Scheduled",
      why: [
        "Ready=True (Scheduled): fine",
        "last applied: sleep of 2025-06-02T12:00:00Z",
        "selects 3 Cluster(s)",
      ],
      waitingFor: ["the next event: wake at 2025-06-02T13:00:00Z"],
    });
  });

  it("waits for a person to fix the timetable while invalid, whatever comes next", () => {
    expect(
      explainHibernationSchedule(
        hibernation({ state: "invalid", nextEvent: { action: "wake", time: "2025-06-02T13:00:00Z" } }),
      ),
    ).toEqual({
      state: "invalid",
      phase: undefined,
      why: [],
      waitingFor: ["a person to fix the timetable (spec.schedules)"],
    });
  });

  it("waits for nothing and says nothing more where no engine has written a status", () => {
    expect(explainHibernationSchedule(hibernation())).toEqual({
      state: undefined,
      phase: undefined,
      why: [],
      waitingFor: [],
    });
  });
});

describe("explaining a ClusterSnapshotSchedule", () => {
  it("says Ready, the last snapshots taken and the count selected, and waits for the next ones", () => {
    expect(
      explainClusterSnapshotSchedule(
        snapshots({
          state: "scheduled",
          phase: "Scheduled",
          conditions: [READY],
          lastScheduled: "2025-06-02T12:00:00Z",
          nextScheduled: "2025-06-02T13:00:00Z",
          selected: 0,
        }),
      ),
    ).toEqual({
      state: "scheduled",
      phase: "Scheduled",
      why: [
        "Ready=True (Scheduled): fine",
        "last taken: the snapshots due at 2025-06-02T12:00:00Z",
        "selects 0 Cluster(s)",
      ],
      waitingFor: ["the next snapshots, due at 2025-06-02T13:00:00Z"],
    });
  });

  it("waits for a person to fix every or keep while invalid", () => {
    expect(explainClusterSnapshotSchedule(snapshots({ state: "invalid", selected: 1 }))).toEqual({
      state: "invalid",
      phase: undefined,
      why: ["selects 1 Cluster(s)"],
      waitingFor: ["a person to fix spec.every or spec.keep"],
    });
  });
});
