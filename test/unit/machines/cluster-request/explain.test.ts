/** `explain clusterrequest`: why a request is where it is and what it waits for, from the object alone. */
import { describe, expect, it } from "vitest";
import type { ClusterRequest } from "../../../../src/api/cluster-request.ts";
import { CLUSTER_REQUEST_FINALIZERS } from "../../../../src/api/constants/cluster-request.ts";
import { explainClusterRequest } from "../../../../src/machines/cluster-request/explain.ts";
import { aClusterRequest, stored } from "../../../support/builders.ts";

const NOW = "2026-11-23T10:00:00Z";

function withCondition(
  reason: string,
  message: string,
  phase = "Pending",
  extra: Partial<ClusterRequest> = {},
) {
  const request = stored(aClusterRequest({ name: "r", namespace: "team-a", purpose: "batch" }));
  return {
    ...request,
    ...extra,
    metadata: { ...request.metadata, finalizers: [CLUSTER_REQUEST_FINALIZERS.request], ...extra.metadata },
    status: {
      observedGeneration: 1,
      phase,
      conditions: [
        {
          type: "ClusterGranted",
          status: "False" as const,
          lastTransitionTime: NOW,
          observedGeneration: 1,
          reason,
          message,
        },
      ],
      ...extra.status,
    },
  } as ClusterRequest;
}

describe("explain clusterrequest", () => {
  it("says nobody has looked at a new request, and who should", () => {
    const explanation = explainClusterRequest(stored(aClusterRequest()));
    expect(explanation.state).toBe("pending");
    expect(explanation.why).toEqual(["no scheduler has looked at it yet"]);
    expect(explanation.waitingFor[0]).toContain("--no-schedule");
  });

  it("names the unmapped purpose and what a person must add", () => {
    const explanation = explainClusterRequest(
      withCondition("ConfigurationProblem", 'the scheduler configuration has no mapping for purpose "batch"'),
    );
    expect(explanation.state).toBe("misconfigured");
    expect(explanation.why[0]).toContain('purpose "batch"');
    expect(explanation.waitingFor[0]).toContain('add a purposeMapping for "batch"');
  });

  it("tells a denial's reason and message", () => {
    const explanation = explainClusterRequest(
      withCondition("ClusterConflict", "Cluster fleet/mcp-abcdefgh … serves another", "Denied"),
    );
    expect(explanation.state).toBe("denied");
    expect(explanation.why).toEqual([
      "denied (ClusterConflict): Cluster fleet/mcp-abcdefgh … serves another",
    ]);
  });

  it("names the Cluster a Granted request holds and how to get access to it", () => {
    const request = withCondition(
      "Granted",
      "Cluster fleet/platform granted with prefix team-a-",
      "Granted",
      {
        status: {
          observedGeneration: 1,
          phase: "Granted",
          cluster: { name: "platform", namespace: "fleet" },
        },
      },
    );
    const explanation = explainClusterRequest(request);
    expect(explanation.state).toBe("granted");
    expect(explanation.why).toEqual(["Cluster fleet/platform granted with prefix team-a-"]);
    expect(explanation.waitingFor[0]).toContain("requestRef team-a/r");
  });

  it("says a deleting request with waitForClusterDeletion waits for its Cluster", () => {
    const request = withCondition("WaitingForClusterDeletion", "waiting", "Granted", {
      metadata: { deletionTimestamp: NOW } as ClusterRequest["metadata"],
      status: { observedGeneration: 1, phase: "Granted", cluster: { name: "mcp-x", namespace: "fleet" } },
    });
    const explanation = explainClusterRequest({
      ...request,
      metadata: {
        ...request.metadata,
        deletionTimestamp: NOW,
        finalizers: [CLUSTER_REQUEST_FINALIZERS.request],
      },
    });
    expect(explanation.state).toBe("deleting.releasing");
    expect(explanation.waitingFor).toEqual(["Cluster fleet/mcp-x to be gone (waitForClusterDeletion)"]);
  });
});
