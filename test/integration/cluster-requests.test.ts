/** The scheduler on a real API server: ClusterRequests answered with Clusters, grants and prefixes, kept through changes and deletions. */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import {
  CLUSTER_REQUEST_ANNOTATIONS,
  CLUSTER_REQUEST_FINALIZERS,
  CLUSTER_REQUEST_LABELS,
} from "../../src/api/constants/cluster-request.ts";
import { ANNOTATIONS, RESOURCES } from "../../src/api/constants.ts";
import type { SchedulerConfig } from "../../src/api/scheduler-config.ts";
import { requestFinalizer, servedRequests } from "../../src/machines/cluster-request/cluster-claims.ts";
import { perRequestClusterName } from "../../src/machines/cluster-request/cluster-names.ts";
import { prefixesCollide } from "../../src/machines/cluster-request/prefixes.ts";
import type { SchedulerConfigView } from "../../src/runtime/kinds/cluster-request/scheduler-config-source.ts";
import { aClusterRequest, type ClusterRequestProps } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { sha256ClusterName } from "../support/old-cluster-names.ts";
import { startWorld, type World } from "../support/world.ts";

let world: World;

/** A configuration the test changes at will, as a reloaded file would. */
class TestConfig implements SchedulerConfigView {
  #config: SchedulerConfig;
  readonly #listeners: Array<(config: SchedulerConfig) => void> = [];
  constructor(config: SchedulerConfig) {
    this.#config = config;
  }
  current = () => this.#config;
  onChange(listener: (config: SchedulerConfig) => void) {
    this.#listeners.push(listener);
  }
  replace(config: SchedulerConfig) {
    this.#config = config;
    for (const listener of this.#listeners) listener(config);
  }
}

const NS = "clusters";
const mapping = (tenancy: "Exclusive" | "Shared", tenancyCount = 0, name?: string) => ({
  tenancyCount,
  template: {
    metadata: { namespace: NS, ...(name ? { name } : {}) },
    spec: { profile: "", tenancy },
  },
});
let config: TestConfig;

beforeAll(async () => {
  world = await startWorld({ engine: false, timing: { pollMs: 200, retryMs: 500, resyncMs: 60_000 } });
  const withProfile = (m: ReturnType<typeof mapping>) => ({
    ...m,
    template: { ...m.template, spec: { ...m.template.spec, profile: world.profile } },
  });
  config = new TestConfig({
    scope: "Cluster",
    strategy: "Balanced",
    selectors: {},
    purposeMappings: {
      mcp: withProfile(mapping("Exclusive")),
      platform: withProfile(mapping("Shared", 0, "platform")),
      workload: withProfile(mapping("Shared", 2)),
      analytics: withProfile(mapping("Shared", 0, "analytics")),
    },
  });
  await world.startEngine({ kindSettings: { ClusterRequest: { schedulerConfig: config } } });
  await world.controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: "team-a" } } });
});

afterAll(async () => {
  await world?.stop();
});

async function createRequest(props: ClusterRequestProps): Promise<ClusterRequest> {
  return (await world.custom.createNamespacedCustomObject({
    ...RESOURCES.ClusterRequest,
    namespace: props.namespace ?? "team-a",
    body: aClusterRequest({ namespace: "team-a", ...props }),
  })) as ClusterRequest;
}

const readRequest = (name: string) => world.read<ClusterRequest>(RESOURCES.ClusterRequest, name, "team-a");
const readGrant = (name: string) =>
  world.read<ClusterRequestGrant>(RESOURCES.ClusterRequestGrant, name, "team-a");
const listClusters = () => world.list<Cluster>(RESOURCES.Cluster, NS);

const granted = (request: ClusterRequest | undefined) => request?.status?.phase === "Granted";

const waitForRequest = (name: string, predicate: (request: ClusterRequest | undefined) => boolean) =>
  world.waitForObject(RESOURCES.ClusterRequest, name, predicate, { namespace: "team-a" });

function conditionOf(request: ClusterRequest | undefined) {
  return request?.status?.conditions?.find((condition) => condition.type === "ClusterGranted");
}

describe("an Exclusive request", () => {
  it("gets a Cluster of its own, named after a digest of the request, with the grant and the copied metadata", async () => {
    const request = await createRequest({
      name: "mcp-one",
      purpose: "mcp",
      labels: { "metadata.open-control-plane.io/team": "a", "other.example/keep-out": "x" },
      annotations: { "metadata.open-control-plane.io/owner": "alice" },
    });
    const done = await waitForRequest("mcp-one", granted);
    const name = perRequestClusterName("mcp-", "team-a", "mcp-one") ?? "";
    expect(done?.status?.cluster).toEqual({ name, namespace: NS });
    expect(done?.metadata.finalizers).toContain(CLUSTER_REQUEST_FINALIZERS.request);
    const cluster = await world.readCluster(name);
    expect(cluster?.spec).toMatchObject({
      tenancy: "Exclusive",
      purposes: ["mcp"],
      profile: world.profile,
    });
    expect(cluster?.metadata.finalizers).toContain(requestFinalizer(request.metadata.uid ?? ""));
    expect(cluster?.metadata.labels).toMatchObject({
      [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "true",
      "metadata.open-control-plane.io/team": "a",
    });
    expect(cluster?.metadata.labels).not.toHaveProperty("other.example/keep-out");
    expect(cluster?.metadata.annotations).toMatchObject({ "metadata.open-control-plane.io/owner": "alice" });
    expect((await readGrant("mcp-one"))?.spec).toEqual({
      requestUID: request.metadata.uid,
      clusterRef: { name, namespace: NS },
      prefix: "",
    });

    // Kept in sync: a changed label follows, a removed one goes.
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "team-a",
      name: "mcp-one",
      body: [
        { op: "replace", path: "/metadata/labels/metadata.open-control-plane.io~1team", value: "b" },
        { op: "remove", path: "/metadata/annotations/metadata.open-control-plane.io~1owner" },
      ],
    });
    await world.waitFor(
      name,
      (c) =>
        c?.metadata.labels?.["metadata.open-control-plane.io/team"] === "b" &&
        c?.metadata.annotations?.["metadata.open-control-plane.io/owner"] === undefined,
    );
  });

  it("with the randomize label gets a generated name, and exactly one Cluster", async () => {
    const request = await createRequest({
      name: "mcp-random",
      purpose: "mcp",
      labels: { [CLUSTER_REQUEST_LABELS.randomizeClusterName]: "true" },
    });
    const done = await waitForRequest("mcp-random", granted);
    const name = done?.status?.cluster?.name ?? "";
    expect(name).toMatch(/^mcp-[a-z0-9]{5}$/);
    const holding = (await listClusters()).filter((c) =>
      servedRequests(c).includes(request.metadata.uid ?? ""),
    );
    expect(holding.map((c) => c.metadata.name)).toEqual([name]);
  });
});

describe("Shared requests", () => {
  it("share the one Cluster of an unlimited purpose, each with its own prefix, none a prefix of another", async () => {
    const names = Array.from({ length: 20 }, (_, i) => `platform-${i}`);
    await Promise.all(
      names.map((name, i) =>
        createRequest({
          name,
          purpose: "platform",
          annotations: i < 2 ? { [CLUSTER_REQUEST_ANNOTATIONS.prefix]: "team-" } : {},
        }),
      ),
    );
    for (const name of names) await waitForRequest(name, granted);
    const grants = await Promise.all(names.map(readGrant));
    expect(new Set(grants.map((g) => g?.spec.clusterRef.name))).toEqual(new Set(["platform"]));
    const prefixes = grants.map((g) => g?.spec.prefix ?? "");
    expect(prefixes).toContain("team-"); // the first proposal is honoured, the second gets another
    for (const [i, a] of prefixes.entries()) {
      expect(a).not.toBe("");
      for (const b of prefixes.slice(i + 1)) expect(prefixesCollide(a, b)).toBe(false);
    }
    const platform = await world.readCluster("platform");
    expect(servedRequests(platform as Cluster)).toHaveLength(20);
    // Each proposer is told whether it got its prefix, and the one that did not, why.
    const proposers = await Promise.all(["platform-0", "platform-1"].map(readRequest));
    const told = proposers.map((r) => r?.status?.conditions?.find((c) => c.type === "ProposedPrefix"));
    expect(told.map((c) => c?.reason).sort()).toEqual(["PrefixAsProposed", "PrefixTaken"]);
    expect(told.find((c) => c?.reason === "PrefixTaken")?.message).toContain(
      'collides with "team-", held by another request on Cluster clusters/platform',
    );
  });

  it("tells a request proposing an unusable prefix why it got another, in a condition and a Warning Event", async () => {
    await createRequest({
      name: "bad-prefix",
      purpose: "platform",
      annotations: { [CLUSTER_REQUEST_ANNOTATIONS.prefix]: "Bad Prefix!" },
    });
    const request = await waitForRequest("bad-prefix", granted);
    const prefix = (await readGrant("bad-prefix"))?.spec.prefix ?? "";
    expect(prefix).toMatch(/^[a-z0-9][a-z0-9-]{2,19}$/);
    const condition = request?.status?.conditions?.find((c) => c.type === "ProposedPrefix");
    expect(condition).toMatchObject({ status: "False", reason: "InvalidPrefix" });
    expect(condition?.message).toContain('the proposed prefix "Bad Prefix!" is not usable');
    expect(condition?.message).toContain(`prefix "${prefix}" was granted instead`);
    const core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await eventually(async () => {
      const events = await core.listNamespacedEvent({
        namespace: "team-a",
        fieldSelector: "involvedObject.name=bad-prefix",
      });
      const warning = events.items.find((e) => e.reason === "InvalidPrefix");
      expect(warning?.type).toBe("Warning");
      expect(warning?.message).toBe(condition?.message);
    });
  });

  it("never put more than tenancyCount requests on one Cluster", async () => {
    const names = ["workload-0", "workload-1", "workload-2"];
    for (const name of names) await createRequest({ name, purpose: "workload" });
    for (const name of names) await waitForRequest(name, granted);
    const grants = await Promise.all(names.map(readGrant));
    const byCluster = new Map<string, number>();
    for (const grant of grants) {
      const key = grant?.spec.clusterRef.name ?? "";
      byCluster.set(key, (byCluster.get(key) ?? 0) + 1);
    }
    expect([...byCluster.values()].sort()).toEqual([1, 2]);
    for (const cluster of await listClusters()) {
      if (cluster.spec.purposes?.includes("workload"))
        expect(servedRequests(cluster).length).toBeLessThanOrEqual(2);
    }
  });
});

describe("when things go wrong", () => {
  it("shows ConfigurationProblem for an unknown purpose, and grants once the configuration maps it", async () => {
    await createRequest({ name: "odd", purpose: "batch" });
    const stuck = await waitForRequest("odd", (r) => conditionOf(r)?.reason === "ConfigurationProblem");
    expect(stuck?.status?.phase).toBe("Pending");
    expect(conditionOf(stuck)?.message).toContain('purpose "batch"');
    const current = config.current();
    config.replace({
      ...current,
      purposeMappings: { ...current.purposeMappings, batch: current.purposeMappings.mcp as never },
    });
    await waitForRequest("odd", granted);
  });

  it("denies a request whose Cluster name is held by another live request (ClusterConflict, naming it)", async () => {
    const other = await createRequest({ name: "holder", purpose: "platform" });
    await waitForRequest("holder", granted);
    const name = perRequestClusterName("mcp-", "team-a", "clash") ?? "";
    await world.createCluster(name, { purposes: ["mcp"] }, {
      finalizers: [requestFinalizer(other.metadata.uid ?? "")],
    } as never);
    await createRequest({ name: "clash", purpose: "mcp" });
    const denied = await waitForRequest("clash", (r) => r?.status?.phase === "Denied");
    expect(conditionOf(denied)).toMatchObject({ reason: "ClusterConflict" });
    expect(conditionOf(denied)?.message).toContain(name);
  });

  /** Requests the trait `example.com/gpu`, which no profile offers, and checks the denial and its message. */
  async function expectGpuDenied(name: string, purpose: string, message: string): Promise<void> {
    await createRequest({ name, purpose, annotations: { [ANNOTATIONS.traits]: "example.com/gpu" } });
    const denied = await waitForRequest(name, (r) => r?.status?.phase === "Denied");
    expect(conditionOf(denied)).toMatchObject({ reason: "MissingTrait" });
    expect(conditionOf(denied)?.message).toContain(message);
  }

  it("denies a request for a trait no profile offers, naming the trait", async () => {
    await expectGpuDenied("gpu", "mcp", "example.com/gpu");
  });

  it("denies a request on a Shared purpose for a trait no profile offers MissingTrait too, naming the trait", async () => {
    await waitForRequest("holder", granted); // the one platform Cluster exists, and lacks the trait
    await expectGpuDenied(
      "shared-gpu",
      "platform",
      "no ClusterProfile offers the required traits: example.com/gpu",
    );
  });

  it("finds a Cluster named the old way (sha256) through the request's finalizer when status and grant are lost", async () => {
    // The request exists before its Cluster (whose finalizer names its uid); the engine looks only afterwards.
    const request = await createRequest({
      name: "older",
      purpose: "mcp",
      annotations: { "openmcp.cloud/operation": "ignore" },
    });
    const oldName = sha256ClusterName("mcp-", "team-a", "older");
    await world.createCluster(oldName, { purposes: ["mcp"] }, {
      finalizers: [requestFinalizer(request.metadata.uid ?? "")],
    } as never);
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "team-a",
      name: "older",
      body: [{ op: "remove", path: "/metadata/annotations/openmcp.cloud~1operation" }],
    });
    const done = await waitForRequest("older", granted);
    expect(done?.status?.cluster).toEqual({ name: oldName, namespace: NS });
    expect(await world.readCluster(perRequestClusterName("mcp-", "team-a", "older") ?? "")).toBeUndefined();
  });

  it("makes a Cluster deleted by hand again under the same name, and re-adds a removed finalizer", async () => {
    const request = await createRequest({ name: "phoenix", purpose: "mcp" });
    const first = await waitForRequest("phoenix", granted);
    const name = first?.status?.cluster?.name ?? "";
    const uid = request.metadata.uid ?? "";
    const before = await world.waitFor(name, (c) => c?.status?.phase === "Ready");
    await world.custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name });
    await world.waitFor(name, (c) => c !== undefined && c.metadata.uid !== before?.metadata.uid);
    const again = await world.waitFor(
      name,
      (c) => c?.metadata.finalizers?.includes(requestFinalizer(uid)) === true && c.status?.phase === "Ready",
    );
    expect(again?.metadata.uid).not.toBe(before?.metadata.uid);
    await waitForRequest("phoenix", granted);
  });
});

describe("the design record's extras", () => {
  it("gives a request whose Purpose is dedicated a Cluster of its own, though its mapping is Shared", async () => {
    await world.custom.createClusterCustomObject({
      ...RESOURCES.Purpose,
      body: {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "Purpose",
        metadata: { name: "analytics" },
        spec: { dedicated: true },
      },
    });
    const request = await createRequest({ name: "private-analytics", purpose: "analytics" });
    const done = await waitForRequest("private-analytics", granted);
    expect(done?.status?.cluster?.name).toBe(
      perRequestClusterName("analytics-", "team-a", "private-analytics") ?? "",
    );
    const cluster = await world.readCluster(done?.status?.cluster?.name ?? "");
    expect(cluster?.spec.tenancy).toBe("Exclusive");
    expect(servedRequests(cluster as Cluster)).toEqual([request.metadata.uid]);
    expect((await readGrant("private-analytics"))?.spec.prefix).toBe("");
  });

  it("puts back a removed finalizer, and a deleted grant with the same Cluster and prefix", async () => {
    const request = await createRequest({ name: "restored", purpose: "platform" });
    await waitForRequest("restored", granted);
    const before = await readGrant("restored");
    const uid = request.metadata.uid ?? "";
    const platform = (await world.readCluster("platform")) as Cluster;
    const index = platform.metadata.finalizers?.indexOf(requestFinalizer(uid)) ?? -1;
    expect(index).toBeGreaterThanOrEqual(0);
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "platform",
      body: [
        { op: "test", path: `/metadata/finalizers/${index}`, value: requestFinalizer(uid) },
        { op: "remove", path: `/metadata/finalizers/${index}` },
      ],
    });
    await world.waitFor("platform", (c) => c?.metadata.finalizers?.includes(requestFinalizer(uid)) === true);
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterRequestGrant,
      namespace: "team-a",
      name: "restored",
    });
    const after = await eventually(async () =>
      satisfying(
        await readGrant("restored"),
        (g) => g?.metadata.uid !== before?.metadata.uid && g !== undefined,
      ),
    );
    expect(after?.spec).toEqual(before?.spec);
  });
});

describe("deleting a request", () => {
  it("lets go of a shared Cluster others still use, and deletes an Exclusive one marked delete-without-requests", async () => {
    await createRequest({ name: "gone-exclusive", purpose: "mcp" });
    const done = await waitForRequest("gone-exclusive", granted);
    const name = done?.status?.cluster?.name ?? "";
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "team-a",
      name: "gone-exclusive",
    });
    await waitForRequest("gone-exclusive", (r) => r === undefined);
    await world.waitFor(name, (c) => c === undefined);
    expect(await readGrant("gone-exclusive")).toBeUndefined();

    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "team-a",
      name: "platform-0",
    });
    await waitForRequest("platform-0", (r) => r === undefined);
    const platform = await world.readCluster("platform");
    expect(platform?.metadata.deletionTimestamp).toBeUndefined();
    expect(servedRequests(platform as Cluster)).toHaveLength(22); // 19 platform-*, "bad-prefix", "holder" and "restored"
  });

  it("with waitForClusterDeletion stays until its Cluster is gone", async () => {
    await createRequest({ name: "patient", purpose: "mcp", waitForClusterDeletion: true });
    const done = await waitForRequest("patient", granted);
    const name = done?.status?.cluster?.name ?? "";
    await world.waitFor(name, (c) => c?.status?.phase === "Ready");
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: "team-a",
      name: "patient",
    });
    await waitForRequest("patient", (r) => r === undefined);
    // Checked the moment the request is gone: its Cluster went first.
    expect(await world.readCluster(name)).toBeUndefined();
  });
});
