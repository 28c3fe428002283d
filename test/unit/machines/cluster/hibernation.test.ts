/** A Cluster asked to sleep and to wake, step by step: states, commands, conditions and Events, all pure. */
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../../src/api/backend.ts";
import type { Cluster } from "../../../../src/api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../../src/api/constants/hibernation.ts";
import { aCluster, input, readyAt } from "../../../support/cluster-fixtures.ts";
import { conditionOf } from "../../../support/conditions.ts";
import { afterWrites, stepClusterWrites } from "../../../support/step-writes.ts";

const asleep = (phase: "hibernating" | "hibernated" | "waking"): ClusterObservation => ({
  exists: true,
  phase,
  version: "1.33.3",
  endpoint: "https://127.0.0.1:6443",
});

/** A Ready Cluster (provisioned, then ready at the backend). */
function readyCluster(): Cluster {
  const provisioning = afterWrites(aCluster(), stepClusterWrites(input(aCluster(), { exists: false })));
  return afterWrites(provisioning, stepClusterWrites(input(provisioning, readyAt("1.33.3"))));
}

const annotated = (cluster: Cluster, value: string | undefined): Cluster => {
  const annotations = { ...cluster.metadata.annotations };
  if (value === undefined) delete annotations[HIBERNATE_ANNOTATION];
  else annotations[HIBERNATE_ANNOTATION] = value;
  return { ...cluster, metadata: { ...cluster.metadata, annotations } };
};

/** One step with the backend's observation; `offered`: the backend has hibernate and wake. */
function step(cluster: Cluster, observation: ClusterObservation, offered = true) {
  const result = stepClusterWrites(input(cluster, observation, { hibernationOffered: offered }));
  return { result, cluster: afterWrites(cluster, result) };
}

/** A Cluster asked to sleep and Hibernated (its backend's cluster asleep). */
function hibernatedCluster() {
  return step(step(annotated(readyCluster(), "true"), readyAt("1.33.3")).cluster, asleep("hibernated"));
}

describe("a Ready Cluster asked to sleep", () => {
  const ready = readyCluster();
  const asked = annotated(ready, "true");
  const going = step(asked, readyAt("1.33.3"));

  it("orders hibernate, and says it is going to sleep", () => {
    expect(ready.status?.providerStatus?.state).toBe("ready");
    expect(going.result.state).toBe("hibernating");
    expect(going.result.commands).toEqual([{ kind: "hibernate" }]);
    expect(going.result.events).toContainEqual({
      type: "Normal",
      reason: "Hibernating",
      message: "Putting the cluster to sleep",
    });
    expect(conditionOf(going.cluster, "Hibernation")).toMatchObject({
      status: "False",
      reason: "Hibernating",
    });
    expect(going.cluster.status?.phase).toBe("Progressing");
  });

  it("orders it again while the backend still serves, and waits while it goes to sleep", () => {
    expect(step(going.cluster, readyAt("1.33.3")).result.commands).toEqual([{ kind: "hibernate" }]);
    const waiting = step(going.cluster, asleep("hibernating"));
    expect(waiting.result.state).toBe("hibernating");
    expect(waiting.result.commands).toEqual([]);
  });

  const slept = step(going.cluster, asleep("hibernated"));

  it("is Hibernated once the backend says so: ClusterReady False Hibernated, the endpoint kept", () => {
    expect(slept.result.state).toBe("hibernated");
    expect(slept.result.commands).toEqual([]);
    expect(conditionOf(slept.cluster, "ClusterReady")).toMatchObject({
      status: "False",
      reason: "Hibernated",
    });
    expect(conditionOf(slept.cluster, "Hibernation")).toMatchObject({ status: "True", reason: "Hibernated" });
    expect(slept.cluster.status?.apiServer).toBe("https://127.0.0.1:6443");
    // At rest: looked at again at the resync period, nothing written when nothing changed.
    const again = step(slept.cluster, asleep("hibernated"));
    expect(again.result.state).toBe("hibernated");
    expect(again.result.statusPatch).toEqual([]);
  });

  it("wakes when asked (annotation false or gone): wake ordered, then Ready with the same endpoint", () => {
    for (const value of ["false", undefined]) {
      const waking = step(annotated(slept.cluster, value), asleep("hibernated"));
      expect(waking.result.state).toBe("waking");
      expect(waking.result.commands).toEqual([{ kind: "wake" }]);
      // Still asleep at the next look: the wake is ordered again (idempotent).
      expect(step(waking.cluster, asleep("hibernated")).result.commands).toEqual([{ kind: "wake" }]);
      expect(step(waking.cluster, asleep("waking")).result.commands).toEqual([]);
      const awake = step(waking.cluster, readyAt("1.33.3"));
      expect(awake.result.state).toBe("ready");
      expect(awake.cluster.status?.phase).toBe("Ready");
      expect(awake.cluster.status?.apiServer).toBe("https://127.0.0.1:6443");
    }
  });

  it("is deleted from every hibernation state: the backend's delete, never a wake first", () => {
    for (const [cluster, observation] of [
      [going.cluster, asleep("hibernating")],
      [slept.cluster, asleep("hibernated")],
    ] as const) {
      const deleting = step(
        { ...cluster, metadata: { ...cluster.metadata, deletionTimestamp: "2026-11-28T00:00:00Z" } },
        observation,
      );
      expect(deleting.result.state.startsWith("deleting")).toBe(true);
      expect(deleting.result.commands).toEqual([{ kind: "delete" }]);
    }
  });

  it("is made again, awake, when the backend lost it while asleep", () => {
    const lost = step(slept.cluster, { exists: false });
    expect(lost.result.state).toBe("provisioning");
    expect(lost.result.commands.map((c) => c.kind)).toEqual(["create"]);
  });
});

describe("a Cluster asleep at the backend though not asked (a wake the engine died in)", () => {
  it("is woken", () => {
    const woken = step(readyCluster(), asleep("hibernated"));
    expect(woken.result.state).toBe("waking");
    expect(woken.result.commands).toEqual([{ kind: "wake" }]);
  });

  // Both found by cluster-hibernation.property.test.ts: a kill between a command and the status write after it.
  it("a Ready Cluster whose cluster is waking is Waking, not Ready, until it serves", () => {
    const waking = step(readyCluster(), asleep("waking"));
    expect(waking.result.state).toBe("waking");
    expect(conditionOf(waking.cluster, "ClusterReady")?.status).not.toBe("True");
    expect(step(waking.cluster, readyAt("1.33.3")).result.state).toBe("ready");
  });

  it("a Hibernated Cluster asked to sleep whose cluster is waking is put to sleep again, not left Hibernated", () => {
    const slept = hibernatedCluster();
    expect(slept.result.state).toBe("hibernated");
    const again = step(slept.cluster, asleep("waking"));
    expect(again.result.state).toBe("hibernating");
    expect(again.result.commands.at(-1)).toEqual({ kind: "hibernate" });
  });

  it("a Hibernated Cluster asked to sleep whose cluster is still going to sleep orders the sleep again, not left Hibernated", () => {
    // As after a sleep the engine died in before it wrote `hibernating`: the backend's sleep unfinished, or halted half-way.
    const slept = hibernatedCluster();
    expect(slept.result.state).toBe("hibernated");
    const again = step(slept.cluster, asleep("hibernating"));
    expect(again.result.state).toBe("hibernating");
    expect(again.result.commands).toEqual([{ kind: "hibernate" }]);
    expect(step(again.cluster, asleep("hibernated")).result.state).toBe("hibernated");
  });
});

describe("a new Cluster whose cluster sleeps (a sleeping pool's member it took)", () => {
  const provisioning = afterWrites(aCluster(), stepClusterWrites(input(aCluster(), { exists: false })));

  it("is woken before it is Ready: never Ready on a sleeping cluster", () => {
    const woken = step(provisioning, asleep("hibernated"));
    expect(woken.result.state).toBe("waking");
    expect(woken.result.commands).toEqual([{ kind: "wake" }]);
    expect(woken.cluster.status?.phase).toBe("Progressing");
    expect(step(woken.cluster, asleep("waking")).result.state).toBe("waking");
    const ready = step(woken.cluster, readyAt("1.33.3"));
    expect(ready.result.state).toBe("ready");
    expect(ready.cluster.status?.phase).toBe("Ready");
  });
});

describe("what cannot be done", () => {
  it("a backend without hibernation: the Cluster stays Ready and awake, the condition and one Warning say why", () => {
    const refused = step(annotated(readyCluster(), "true"), readyAt("1.33.3"), false);
    expect(refused.result.state).toBe("ready");
    expect(refused.result.commands).toEqual([]);
    expect(conditionOf(refused.cluster, "Hibernation")).toMatchObject({
      status: "False",
      reason: "HibernationNotOffered",
      message: `the backend of profile test.engine-test.small cannot put clusters to sleep; remove annotation ${HIBERNATE_ANNOTATION}`,
    });
    expect(refused.result.events).toEqual([
      expect.objectContaining({ type: "Warning", reason: "HibernationNotOffered" }),
    ]);
    expect(step(refused.cluster, readyAt("1.33.3"), false).result.events).toEqual([]); // once
  });

  it("an invalid value: taken as awake, named in the condition", () => {
    const invalid = step(annotated(readyCluster(), "yes"), readyAt("1.33.3"));
    expect(invalid.result.state).toBe("ready");
    expect(invalid.result.commands).toEqual([]);
    expect(conditionOf(invalid.cluster, "Hibernation")).toMatchObject({
      status: "False",
      reason: "InvalidHibernationRequest",
      message: `annotation ${HIBERNATE_ANNOTATION} is "yes": give "true" (asleep) or "false" (awake)`,
    });
  });
});
