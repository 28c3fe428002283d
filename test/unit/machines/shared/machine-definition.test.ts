/** A kind's definition by the engine's conventions: apiVersion, the names a person types, the statechart files. */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ACCESS_REQUEST_DEFINITION } from "../../../../src/machines/access-request/definition.ts";
import { CLUSTER_DEFINITION } from "../../../../src/machines/cluster/definition.ts";
import { CLUSTER_REQUEST_DEFINITION } from "../../../../src/machines/cluster-request/definition.ts";
import { SNAPSHOT_SCHEDULE_DEFINITION } from "../../../../src/machines/cluster-snapshot-schedule/definition.ts";
import { ENGINE_CLUSTER_DEFINITION } from "../../../../src/machines/engine-cluster/definition.ts";
import { ENGINE_CONTROL_PLANE_DEFINITION } from "../../../../src/machines/engine-control-plane/definition.ts";
import { HIBERNATION_SCHEDULE_DEFINITION } from "../../../../src/machines/hibernation-schedule/definition.ts";
import { machineDefinition } from "../../../../src/machines/shared/machine-definition.ts";

describe("machineDefinition", () => {
  it.each([
    [
      ACCESS_REQUEST_DEFINITION,
      "clusters.openmcp.cloud/v1alpha1",
      ["accessrequest", "accessrequests", "ar", "areq"],
      "accessRequest",
    ],
    [
      CLUSTER_REQUEST_DEFINITION,
      "clusters.openmcp.cloud/v1alpha1",
      ["clusterrequest", "clusterrequests", "cr", "creq"],
      "clusterRequest",
    ],
    [CLUSTER_DEFINITION, "clusters.openmcp.cloud/v1alpha1", ["cluster", "clusters"], "cluster"],
    [
      ENGINE_CLUSTER_DEFINITION,
      "infrastructure.engine.openmcp.cloud/v1alpha1",
      ["enginecluster", "engineclusters"],
      "engineCluster",
    ],
    [
      ENGINE_CONTROL_PLANE_DEFINITION,
      "controlplane.engine.openmcp.cloud/v1alpha1",
      ["enginecontrolplane", "enginecontrolplanes", "ecp"],
      "engineControlPlane",
    ],
    [
      HIBERNATION_SCHEDULE_DEFINITION,
      "engine.openmcp.cloud/v1alpha1",
      ["hibernationschedule", "hibernationschedules", "hsched"],
      "hibernationSchedule",
    ],
    [
      SNAPSHOT_SCHEDULE_DEFINITION,
      "engine.openmcp.cloud/v1alpha1",
      ["clustersnapshotschedule", "clustersnapshotschedules", "csnapsched"],
      "clusterSnapshotSchedule",
    ],
  ])(
    "gives %#: the apiVersion of its resource, its names, and statechart files generated from its machine's source",
    (definition, apiVersion, names, file) => {
      expect(definition.apiVersion).toBe(apiVersion);
      expect(definition.names).toEqual(names);
      expect(definition.statechart.file).toBe(file);
      expect(existsSync(definition.statechart.source)).toBe(true);
      expect(definition.statechart.source).toMatch(/^src\/machines\/[a-z-]+\/machine\.ts$/);
    },
  );

  it("finds the machine's folder from a kind of one word and of several", () => {
    const props = {
      resource: { group: "g", version: "v1", plural: "xs", namespaced: true },
      machine: CLUSTER_DEFINITION.machine,
      guardPhrases: {},
    };
    expect(machineDefinition("Cluster", props).statechart.source).toBe("src/machines/cluster/machine.ts");
    expect(machineDefinition("EngineControlPlane", props).statechart.source).toBe(
      "src/machines/engine-control-plane/machine.ts",
    );
    expect(machineDefinition("Cluster", props).names).toEqual(["cluster", "xs"]);
  });
});
