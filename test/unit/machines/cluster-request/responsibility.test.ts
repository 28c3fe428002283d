/** Which ClusterRequests the engine's scheduler acts on, beside another scheduler (openMCP's operator, its kcp mode). */
import { describe, expect, it } from "vitest";
import type { SchedulerConfig } from "../../../../src/api/scheduler-config.ts";
import { clusterRequestResponsibility } from "../../../../src/machines/cluster-request/step.ts";
import { aClusterRequest } from "../../../support/builders.ts";

/** openMCP's kcp mode: the operator grants onboarding and mcp; the engine serves workload. */
const KCP: SchedulerConfig = {
  scope: "Namespaced",
  strategy: "Balanced",
  selectors: {},
  purposesServedElsewhere: ["onboarding", "mcp"],
  purposeMappings: {
    workload: {
      tenancyCount: 0,
      template: { metadata: {}, spec: { profile: "kind", tenancy: "Exclusive" } },
    },
  },
};
const MARKED = { "engine.openmcp.cloud/scheduler": "openmcp-engine" };
const GRANTED = {
  observedGeneration: 1,
  phase: "Granted" as const,
  cluster: { name: "workspace", namespace: "tenant" },
};

describe("clusterRequestResponsibility", () => {
  it("leaves a request of a purpose served elsewhere alone, before and after the other scheduler granted it", () => {
    const fresh = aClusterRequest({ purpose: "mcp", finalizers: ["clusters.openmcp.cloud/request"] });
    expect(clusterRequestResponsibility(fresh, KCP, false)).toBe("servedElsewhere");
    expect(clusterRequestResponsibility({ ...fresh, status: GRANTED }, KCP, false)).toBe("grantedElsewhere");
    // Being deleted with the finalizer openMCP's scheduler shares with the engine: still not ours.
    const deleting = { ...fresh, metadata: { ...fresh.metadata, deletionTimestamp: "2026-11-28T10:00:00Z" } };
    expect(clusterRequestResponsibility(deleting, KCP, false)).toBe("servedElsewhere");
  });

  it("still serves, and lets go of, a request of such a purpose this engine had marked before the configuration changed", () => {
    const held = aClusterRequest({ purpose: "onboarding", annotations: MARKED });
    expect(clusterRequestResponsibility(held, KCP, false)).toBe("ours");
    expect(clusterRequestResponsibility(aClusterRequest({ purpose: "onboarding" }), KCP, true)).toBe("ours");
  });

  it("serves the purposes it maps, from any namespace, and answers an unknown purpose (not listed) itself", () => {
    const tenant = "a3f9c2e17b6d4058e1c2b3a4d5e6f708a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d";
    expect(
      clusterRequestResponsibility(aClusterRequest({ purpose: "workload", namespace: tenant }), KCP, false),
    ).toBe("ours");
    expect(clusterRequestResponsibility(aClusterRequest({ purpose: "typo" }), KCP, false)).toBe("ours");
  });
});
