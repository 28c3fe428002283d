/** A rollout's snapshots before change: each Cluster of a stage snapshotted first, asked only once it is Complete. */
import { describe, expect, it } from "vitest";
import type { ClusterSnapshot } from "../../../../src/api/cluster-snapshot.ts";
import type { Rollout, RolloutSpec } from "../../../../src/api/rollout.ts";
import { stepRollout } from "../../../../src/machines/rollout/step.ts";
import { Fleet, fleetCluster, fleetProfile, fleetRollout } from "../../../support/rollout-fleet.ts";
import { RUN_T0, RUN_TIMING } from "../../../support/rollout-runs.ts";

const OLD = "1.33.6";
const NEW = "1.34.2";
const spec: RolloutSpec = {
  version: NEW,
  canary: 1,
  maxUnavailable: 2,
  snapshots: { beforeChange: true, storage: { folder: { path: "before-upgrades" } } },
};

function stepOnce(fleet: Fleet, rollout: Rollout, snapshots: readonly ClusterSnapshot[], nowMs = RUN_T0) {
  const result = stepRollout({
    object: rollout,
    clusters: fleet.list(),
    profiles: [fleetProfile([OLD, NEW])],
    snapshots,
    now: new Date(nowMs).toISOString(),
    nowMs,
    timing: RUN_TIMING,
  });
  for (const command of result.commands) fleet.apply(command);
  return { result, rollout: { ...rollout, status: result.desired.status } as Rollout };
}

/** `snapshot` as the ClusterSnapshot kind shows it in `phase`. */
const inPhase = (snapshot: ClusterSnapshot, phase: string): ClusterSnapshot => ({
  ...snapshot,
  status: { phase },
});

describe("a rollout with snapshots.beforeChange", () => {
  it("snapshots the canary first, labelled with the run, and asks it for the version only once it is Complete", () => {
    const fleet = new Fleet([fleetCluster("a", OLD), fleetCluster("b", OLD)]);
    const first = stepOnce(fleet, fleetRollout(spec), []);
    expect(first.result.state).toBe("progressing");
    const [command] = first.result.commands;
    expect(first.result.commands).toHaveLength(1);
    expect(command?.kind).toBe("snapshot");
    const made = command?.kind === "snapshot" ? command.snapshots : [];
    expect(made).toEqual([
      expect.objectContaining({
        metadata: expect.objectContaining({
          name: "r-a-rollout-",
          labels: {
            "engine.openmcp.cloud/rollout": "r",
            "engine.openmcp.cloud/rollout-uid": "rollout-uid",
            "engine.openmcp.cloud/snapshot-cluster": "a",
          },
        }),
        spec: { cluster: { name: "a" }, storage: { folder: { path: "before-upgrades" } } },
      }),
    ]);
    expect(fleet.writes.size).toBe(0);
    expect(first.result.events).toEqual(
      expect.arrayContaining([expect.objectContaining({ reason: "SnapshotsCreated" })]),
    );
    const snapshot = made[0] as ClusterSnapshot;

    // Made, not Complete: the stage waits, nothing is asked or made again.
    const taking = stepOnce(fleet, first.rollout, [inPhase(snapshot, "Taking")], RUN_T0 + 1_000);
    expect(taking.result.commands).toEqual([]);
    expect(taking.result.desired.status?.conditions?.find((c) => c.type === "Preflight")).toMatchObject({
      status: "False",
      reason: "SnapshotPending",
      message: expect.stringContaining("ClusterSnapshot r-a-rollout-"),
    });

    // Complete: the canary is asked for the version.
    const complete = stepOnce(fleet, taking.rollout, [inPhase(snapshot, "Complete")], RUN_T0 + 2_000);
    expect(complete.result.commands).toEqual([
      expect.objectContaining({ kind: "change", clusters: [expect.objectContaining({ name: "a" })] }),
    ]);
    expect(fleet.writes.size).toBe(1);
  });

  it("holds the stage for a person when the snapshot failed, naming why", () => {
    const fleet = new Fleet([fleetCluster("a", OLD)]);
    const first = stepOnce(fleet, fleetRollout(spec), []);
    const made = first.result.commands[0];
    const snapshot = made?.kind === "snapshot" ? (made.snapshots[0] as ClusterSnapshot) : undefined;
    const failed: ClusterSnapshot = {
      ...(snapshot as ClusterSnapshot),
      status: {
        phase: "Failed",
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "SnapshotsUnsupported",
            message: "its backend existing takes no snapshots",
            lastTransitionTime: "2026-11-28T12:00:00Z",
          },
        ],
      },
    };
    const held = stepOnce(fleet, first.rollout, [failed], RUN_T0 + 1_000);
    expect(held.result.commands).toEqual([]);
    expect(held.result.desired.status?.conditions?.find((c) => c.type === "Preflight")).toMatchObject({
      reason: "SnapshotFailed",
      message: expect.stringContaining("existing takes no snapshots"),
    });
    expect(fleet.writes.size).toBe(0);
  });

  it("takes no snapshot without the option, nor while paused", () => {
    const fleet = new Fleet([fleetCluster("a", OLD)]);
    const plain = stepOnce(fleet, fleetRollout({ version: NEW }), []);
    expect(plain.result.commands.map((command) => command.kind)).toEqual(["change"]);
    const paused = stepOnce(new Fleet([fleetCluster("a", OLD)]), fleetRollout({ ...spec, paused: true }), []);
    expect(paused.result.commands).toEqual([]);
  });
});
