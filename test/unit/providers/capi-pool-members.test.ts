/** A warm pool's member on its CAPI Cluster: the marks, the binding that relabels it, and where records say it is. */
import { describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import { poolMemberTarget } from "../../../src/api/cluster-pool.ts";
import { applied } from "../../../src/machines/shared/json-patch.ts";
import {
  bindingOperations,
  boundMemberSelector,
  capiPoolMember,
  poolMemberClusterName,
} from "../../../src/providers/capi-pool-members.ts";
import { placeKey, placeOf, recordOf } from "../../../src/providers/capi-records.ts";
import { capiSettings } from "../../../src/providers/capi-settings.ts";
import {
  CAPI_BACKEND_KEYS,
  desiredTopologyCluster,
  type TopologyCluster,
  topologyChanges,
} from "../../../src/providers/capi-topology.ts";
import { aClusterTarget, TENANT_METADATA } from "../../support/builders.ts";

const config = {
  name: "capi",
  settings: { clusterClass: { namespace: "classes", name: "in-memory" }, namespace: "clusters" },
};
const settings = capiSettings(config.settings, "capi");
const member = { id: "pool-0123456789ab", pool: "warm", version: "1.36.3" };
/** The member's CAPI Cluster as Cluster API keeps it: what the backend made, with a resourceVersion. */
const idle: TopologyCluster = (() => {
  const made = desiredTopologyCluster(
    { ...poolMemberTarget(member.id, config), poolMember: member },
    settings,
    "1.36.3",
  );
  return { ...made, metadata: { ...made.metadata, resourceVersion: "12" } };
})();
const target: ClusterTarget = {
  ...aClusterTarget({ providerConfig: "capi", ...TENANT_METADATA }),
  settings: config.settings,
};

describe("a pool member's CAPI Cluster", () => {
  it("is made marked with its member id (a label), its pool and version, under its member target's name", () => {
    expect(idle.metadata.name).toBe(poolMemberClusterName(member.id));
    expect(idle.metadata.labels).toMatchObject({
      [CAPI_BACKEND_KEYS.poolMemberLabel]: member.id,
      [CAPI_BACKEND_KEYS.clusterUidLabel]: member.id,
    });
    expect(idle.metadata.annotations).toEqual({
      [CAPI_BACKEND_KEYS.poolAnnotation]: "warm",
      [CAPI_BACKEND_KEYS.poolVersionAnnotation]: "1.36.3",
    });
    expect(capiPoolMember(idle)).toEqual(member);
  });

  it("is no member when made for a Cluster, nor without its pool annotation", () => {
    expect(capiPoolMember(desiredTopologyCluster(target, settings, "1.36.3"))).toBeUndefined();
    expect(capiPoolMember({ ...idle, metadata: { ...idle.metadata, annotations: {} } })).toBeUndefined();
  });

  it("reports the version it was asked at, else the topology's", () => {
    const upgraded = { ...idle, spec: { topology: { ...idle.spec.topology, version: "v1.37.0" } } };
    expect(capiPoolMember(upgraded as TopologyCluster)?.version).toBe("1.36.3");
    const unannotated = {
      ...upgraded,
      metadata: { ...idle.metadata, annotations: { [CAPI_BACKEND_KEYS.poolAnnotation]: "warm" } },
    };
    expect(capiPoolMember(unannotated as TopologyCluster)?.version).toBe("1.37.0");
  });
});

describe("bindingOperations", () => {
  const operations = bindingOperations(idle, member.id, target);
  const bound = applied(idle, operations);

  it("relabels the member as the Cluster's own, under a test that it is still unbound", () => {
    expect(operations[0]).toEqual({
      op: "test",
      path: "/metadata/labels/engine.openmcp.cloud~1cluster-uid",
      value: member.id,
    });
    expect(bound.metadata.labels).toMatchObject({
      [CAPI_BACKEND_KEYS.clusterUidLabel]: "u-1",
      [CAPI_BACKEND_KEYS.clusterNamespaceLabel]: "team-a",
      [CAPI_BACKEND_KEYS.clusterNameLabel]: "dev",
      [CAPI_BACKEND_KEYS.poolMemberLabel]: member.id,
    });
    expect(bound.metadata.name).toBe(idle.metadata.name);
    expect(capiPoolMember(bound)).toEqual({ ...member, boundTo: "u-1" });
  });

  it("is empty once bound to that Cluster: binding again changes nothing", () => {
    expect(bindingOperations(bound, member.id, target)).toEqual([]);
  });

  it("refuses a member bound to another Cluster, one being deleted, and another member's CAPI Cluster", () => {
    const other = { ...target, uid: "u-2", namespace: "team-b", name: "other" };
    expect(() => bindingOperations(bound, member.id, other)).toThrow(
      `pool member ${member.id} (CAPI Cluster clusters/${idle.metadata.name}) serves Cluster team-a/dev (uid u-1); Cluster team-b/other cannot take it`,
    );
    const deleting = { ...idle, metadata: { ...idle.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } };
    expect(() => bindingOperations(deleting, member.id, target)).toThrow("is being deleted");
    expect(() => bindingOperations(idle, "pool-other", target)).toThrow("is not pool member pool-other");
  });

  it("leaves the marks to every later update of the Cluster, which brings only its own metadata in", () => {
    const changes = topologyChanges(bound, desiredTopologyCluster(target, settings, "1.36.3"));
    expect(changes).toEqual({
      metadata: {
        labels: { "metadata.open-control-plane.io/tenant": "acme" },
        annotations: { "metadata.open-control-plane.io/owner": "bob" },
      },
    });
  });

  it("is found by the Cluster's uid among members", () => {
    expect(boundMemberSelector("u-1")).toBe(
      "engine.openmcp.cloud/cluster-uid=u-1,engine.openmcp.cloud/pool-member",
    );
  });
});

describe("places and records", () => {
  it("keys a place by management cluster and namespace, whichever ProviderConfig named it", () => {
    const place = placeOf(settings, "capi");
    expect(placeKey({ ...place, providerConfig: "another" })).toBe(placeKey(place));
    expect(placeKey({ ...place, namespace: "elsewhere" })).not.toBe(placeKey(place));
    const remote = placeOf(
      capiSettings({ ...config.settings, kubeconfigSecretRef: { namespace: "ns", name: "mgmt" } }, "capi"),
      "capi",
    );
    expect(placeKey(remote)).not.toBe(placeKey(place));
  });

  it("records a bound member's CAPI Cluster under the Cluster's uid, saying which member it is", () => {
    const record = recordOf(target, placeOf(settings, "capi"), idle.metadata.name, "1.36.3", {
      id: member.id,
      pool: "warm",
    });
    expect(record).toEqual({
      uid: "u-1",
      cluster: "team-a/dev",
      providerConfig: "capi",
      namespace: "clusters",
      name: idle.metadata.name,
      version: "1.36.3",
      deletionTimeoutMs: 900_000,
      poolMember: { id: member.id, pool: "warm" },
    });
    expect(recordOf(target, placeOf(settings, "capi"), "n", "1.36.3")).not.toHaveProperty("poolMember");
  });
});
