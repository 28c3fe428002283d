/** The pure half of `move`: what moves, in which order, and what each copy looks like on the target. */
import { describe, expect, it } from "vitest";
import { ACCESS_REQUEST_LABELS } from "../../../../src/api/constants/access-request.ts";
import {
  HANDOVER_ANNOTATION,
  HANDOVER_MESSAGE_ANNOTATION,
  HANDOVER_OWNER_LABEL,
  HANDOVER_STATE_ANNOTATION,
  IDENTITY_ANNOTATION,
  PAUSED_ANNOTATION,
} from "../../../../src/api/move.ts";
import {
  configsToRemove,
  copyDecision,
  copyOf,
  handoverOf,
  handoverTaken,
  MOVED_KINDS,
  type MovedKind,
  type MovedObject,
  selectObjects,
  statusOf,
} from "../../../../src/machines/move/plan.ts";

const kind = (name: string) => MOVED_KINDS.find((entry) => entry.kind === name) as MovedKind;
const object = (
  name: string,
  uid: string,
  extra: Partial<MovedObject> & { metadata?: Partial<MovedObject["metadata"]> } = {},
): MovedObject => ({
  ...extra,
  metadata: { name, namespace: "team", uid, resourceVersion: "7", ...extra.metadata },
});

const cluster = object("c1", "uid-cluster", {
  spec: { profile: "test.p.small" },
  metadata: { finalizers: ["request.clusters.openmcp.cloud/uid-request"] },
  status: { phase: "Ready" },
});
const request = object("r1", "uid-request", {
  status: { phase: "Granted", cluster: { name: "c1", namespace: "team" } },
});
const grant = object("r1", "uid-grant", {
  spec: { requestUID: "uid-request" },
  metadata: {
    ownerReferences: [{ apiVersion: "v", kind: "ClusterRequest", name: "r1", uid: "uid-request" }],
  },
});
const access = object("a1", "uid-access", { spec: { clusterRef: { name: "c1", namespace: "team" } } });
const accessSecret = object("a1.kubeconfig", "uid-s1", {
  metadata: { labels: { [ACCESS_REQUEST_LABELS.accessRequestUid]: "uid-access" } },
});
const handover = object("c1-handover", "uid-s2", {
  metadata: {
    labels: { [HANDOVER_OWNER_LABEL]: "uid-cluster" },
    annotations: { [HANDOVER_STATE_ANNOTATION]: "ready" },
  },
});
const otherSecret = object("unrelated", "uid-s3");
const config = { metadata: { name: "small", uid: "uid-config" } } as MovedObject;
const source = {
  objects: {
    ProviderConfig: [config, { metadata: { name: "unused", uid: "uid-config-2" } }],
    Cluster: [cluster, object("elsewhere", "uid-c2", { metadata: { namespace: "other" } })],
    ClusterRequest: [request],
    ClusterRequestGrant: [grant],
    AccessRequest: [access],
    Secret: [accessSecret, handover, otherSecret],
  },
  profileConfigs: { "test.p.small": "small" },
};

describe("the selection of a move", () => {
  it("takes the namespace's Clusters, requests, grants, AccessRequests, their Secrets and the ProviderConfigs they use", () => {
    const { objects, refused } = selectObjects(source, ["team"]);
    const names = Object.fromEntries(
      Object.entries(objects).map(([name, list]) => [name, list.map((entry) => entry.metadata.name)]),
    );
    expect(names).toEqual({
      ProviderConfig: ["small"],
      Cluster: ["c1"],
      ClusterRequest: ["r1"],
      ClusterRequestGrant: ["r1"],
      AccessRequest: ["a1"],
      Secret: ["a1.kubeconfig", "c1-handover"],
    });
    expect(refused).toEqual([]);
  });

  it("leaves a refused Cluster with everything that uses it", () => {
    const { objects, refused } = selectObjects(source, ["team"], new Map([["team/c1", "backend x cannot"]]));
    expect(Object.values(objects).flat()).toEqual([]);
    expect(refused).toEqual([{ cluster: "team/c1", reason: "backend x cannot" }]);
  });

  it("copies owners before what they own and removes in the reverse order", () => {
    const order = MOVED_KINDS.map((entry) => entry.kind);
    expect(order.indexOf("Cluster")).toBeLessThan(order.indexOf("Secret"));
    expect(order.indexOf("ClusterRequest")).toBeLessThan(order.indexOf("ClusterRequestGrant"));
    expect(order.indexOf("AccessRequest")).toBeLessThan(order.indexOf("Secret"));
  });
});

describe("a copy", () => {
  const uids = new Map([
    ["uid-cluster", "new-cluster"],
    ["uid-request", "new-request"],
  ]);

  it("keeps labels, annotations, finalizers and spec, drops what the API server owns, is paused and names its identity", () => {
    const copy = copyOf(cluster, kind("Cluster"), uids);
    expect(copy.metadata).toEqual({
      name: "c1",
      namespace: "team",
      finalizers: ["request.clusters.openmcp.cloud/new-request"],
      annotations: {
        [PAUSED_ANNOTATION]: "true",
        [IDENTITY_ANNOTATION]: "uid-cluster",
        [HANDOVER_ANNOTATION]: "c1-handover",
      },
    });
    expect(copy.spec).toEqual(cluster.spec);
    expect(copy.status).toBeUndefined();
    expect(statusOf(cluster, kind("Cluster"), uids)).toEqual({ phase: "Ready" });
  });

  it("re-points uid references to the target's uids and drops owner references not on the target yet", () => {
    expect(copyOf(grant, kind("ClusterRequestGrant"), uids)).toMatchObject({
      spec: { requestUID: "new-request" },
      metadata: { ownerReferences: [{ name: "r1", uid: "new-request" }] },
    });
    expect(copyOf(grant, kind("ClusterRequestGrant"), new Map()).metadata.ownerReferences).toBeUndefined();
  });

  it("keeps the first incarnation's identity over a second move", () => {
    const moved = object("c1", "uid-b", { metadata: { annotations: { [IDENTITY_ANNOTATION]: "uid-a" } } });
    const copy = copyOf(
      moved,
      kind("Cluster"),
      new Map([
        ["uid-b", "uid-c"],
        ["uid-a", "uid-x"],
      ]),
    );
    expect(copy.metadata.annotations?.[IDENTITY_ANNOTATION]).toBe("uid-a");
  });

  it("of a Secret is neither paused nor given an identity", () => {
    const copy = copyOf(accessSecret, kind("Secret"), new Map([["uid-access", "new-access"]]));
    expect(copy.metadata.annotations).toBeUndefined();
    expect(copy.metadata.labels).toEqual({ [ACCESS_REQUEST_LABELS.accessRequestUid]: "new-access" });
  });

  it("is written again while paused on the target, never once the target's engine has it", () => {
    const paused = object("c1", "t", { metadata: { annotations: { [PAUSED_ANNOTATION]: "true" } } });
    expect(copyDecision(kind("Cluster"), undefined)).toBe("create");
    expect(copyDecision(kind("Cluster"), paused)).toBe("update");
    expect(copyDecision(kind("Cluster"), object("c1", "t"))).toBe("leave");
    expect(copyDecision(kind("Secret"), object("s", "t"))).toBe("leave");
    expect(copyDecision(kind("ProviderConfig"), object("p", "t"))).toBe("leave");
  });
});

describe("the hand-over", () => {
  it("waits for the Secret made for this Cluster, then is ready or refused with why", () => {
    expect(handoverOf(cluster, [])).toEqual({ state: "waiting" });
    expect(
      handoverOf(cluster, [
        { ...handover, metadata: { ...handover.metadata, labels: { [HANDOVER_OWNER_LABEL]: "older" } } },
      ]),
    ).toEqual({
      state: "waiting",
    });
    expect(handoverOf(cluster, [handover])).toEqual({ state: "ready" });
    const refused = {
      ...handover,
      metadata: {
        ...handover.metadata,
        annotations: {
          [HANDOVER_STATE_ANNOTATION]: "refused",
          [HANDOVER_MESSAGE_ANNOTATION]: "backend x cannot",
        },
      },
    };
    expect(handoverOf(cluster, [refused])).toEqual({ state: "refused", reason: "backend x cannot" });
  });
});

describe("ProviderConfigs leave the source", () => {
  it("only when no Cluster left there uses them", () => {
    const staying = object("c9", "uid-c9", { spec: { profile: "test.p.small" } });
    expect(configsToRemove([config], [], source.profileConfigs)).toEqual([config]);
    expect(configsToRemove([config], [staying], source.profileConfigs)).toEqual([]);
  });
});

describe("a hand-over taken on the target", () => {
  it("is not copied again once its Cluster's copy is resumed or no longer names it; one for a paused copy is", () => {
    const waiting = object("c1", "t", {
      metadata: { annotations: { [HANDOVER_ANNOTATION]: "c1-handover", [PAUSED_ANNOTATION]: "true" } },
    });
    // Resumed by an earlier run that was cut short: the target's engine is taking it, and may have deleted it.
    const resumed = object("c1", "t", {
      metadata: { annotations: { [HANDOVER_ANNOTATION]: "c1-handover" } },
    });
    expect(handoverTaken(handover, undefined)).toBe(false);
    expect(handoverTaken(handover, waiting)).toBe(false);
    expect(handoverTaken(handover, resumed)).toBe(true);
    expect(handoverTaken(handover, object("c1", "t"))).toBe(true);
    expect(handoverTaken(accessSecret, object("c1", "t"))).toBe(false);
  });
});
