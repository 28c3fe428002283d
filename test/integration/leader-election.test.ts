/** The leader elector on a real API server: what a stop does to an attempt still in flight. */

import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { LeaderElector } from "../../src/runtime/leadership/leader-election.ts";
import { readLease } from "../../src/runtime/leadership/lease.ts";

let controlPlane: ControlPlane;

beforeAll(async () => {
  controlPlane = await startControlPlane();
});

afterAll(async () => {
  await controlPlane?.stop();
});

describe("LeaderElector", () => {
  it("released while its first attempt is in flight: never reports leading, and the Lease ends up free", async () => {
    const started: string[] = [];
    const elector = new LeaderElector({
      kubeConfig: controlPlane.kubeConfig,
      namespace: "kube-system",
      name: "in-flight.engine.openmcp.cloud",
      identity: "replica-1",
      onStartedLeading: () => started.push("started"),
      onStoppedLeading: () => started.push("stopped"),
    });
    // start() sends the create at once; release() comes before the API server has answered it.
    elector.start();
    await elector.release();
    const api = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    const lease = await readLease(api, "kube-system", "in-flight.engine.openmcp.cloud");
    // The attempt did create the Lease (so the race was real), and the release gave it back.
    expect(lease?.spec?.acquireTime).toBeDefined();
    expect(lease?.spec?.holderIdentity).toBe("");
    expect(started).toEqual([]);
    expect(elector.isLeader()).toBe(false);
  });
});
