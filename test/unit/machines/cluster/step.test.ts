/** The Cluster step, transition by transition: next state, patches, commands and Events, all pure. */

import { describe, expect, it } from "vitest";
import type { BackendCondition, ClusterObservation } from "../../../../src/api/backend.ts";
import type { Cluster } from "../../../../src/api/cluster.ts";
import {
  CLUSTER_ANNOTATIONS,
  CLUSTER_FINALIZERS,
  CLUSTER_LABELS,
} from "../../../../src/api/constants/cluster.ts";
import { ANNOTATIONS, LABELS } from "../../../../src/api/constants.ts";
import { unobservedStatus } from "../../../../src/machines/cluster/status.ts";
import { clusterResponsibility, clusterTarget } from "../../../../src/machines/cluster/step.ts";
import {
  absent,
  aCluster,
  aProfile,
  CLAIMANT,
  input,
  NOW,
  PROVIDER,
  provisioningAt,
  readyAt,
  TIMING,
} from "../../../support/cluster-fixtures.ts";
import { expectCondition } from "../../../support/conditions.ts";
import { afterWrites, stepClusterWrites } from "../../../support/step-writes.ts";

/** Runs steps against a fixed observation until nothing changes; returns the final object and the last result. */
function settle(cluster: Cluster, observation = absent) {
  let current = cluster;
  let result = stepClusterWrites(input(current, observation));
  for (let i = 0; i < 5 && (result.metadataPatch.length > 0 || result.statusPatch.length > 0); i++) {
    current = afterWrites(current, result);
    result = stepClusterWrites(input(current, observation));
  }
  return { cluster: current, result };
}

const deleted = (cluster: Cluster, finalizers = cluster.metadata.finalizers): Cluster => ({
  ...cluster,
  metadata: { ...cluster.metadata, deletionTimestamp: NOW, ...(finalizers ? { finalizers } : {}) },
});

describe("a new Cluster of ours", () => {
  const result = stepClusterWrites(input(aCluster(), absent));

  it("goes to provisioning, adding the finalizer and ordering the newest non-deprecated version", () => {
    expect(result.state).toBe("provisioning");
    expect(result.metadataPatch).toContainEqual({
      op: "add",
      path: "/metadata/finalizers",
      value: [CLUSTER_FINALIZERS.cluster],
    });
    expect(result.commands).toEqual([{ kind: "create", version: "1.33.3" }]);
    // The backend's target is built once per reconcile (by the kind's `open`), not carried in each command.
    expect(clusterTarget(aCluster(), aProfile())).toEqual({
      uid: "4a1e6f0e-0000-4000-8000-000000000001",
      namespace: "my-namespace",
      name: "my-cluster",
      tenancy: "Shared",
      profile: "test.engine-test.small",
      providerConfig: "small",
    });
    expect(result.requeueAfterMs).toBe(TIMING.pollMs);
  });

  it("labels it with the provider and the version being built, in the same write as the finalizer", () => {
    expect(result.metadataPatch).toContainEqual({
      op: "add",
      path: "/metadata/labels",
      value: { [LABELS.provider]: PROVIDER, [CLUSTER_LABELS.k8sVersion]: "1.33.3" },
    });
  });

  it("writes a Progressing status with the machine state, observedGeneration and reasons", () => {
    const cluster = afterWrites(aCluster(), result);
    expect(cluster.status).toMatchObject({
      observedGeneration: 1,
      phase: "Progressing",
      providerStatus: { state: "provisioning" },
    });
    expect(cluster.status?.conditions).toContainEqual({
      type: "ClusterReady",
      status: "False",
      observedGeneration: 1,
      lastTransitionTime: NOW,
      reason: "Provisioning",
      message: "creating the cluster",
    });
    expect(JSON.stringify(cluster.status)).not.toMatch(/kubeconfig/i);
  });

  it("records a Normal Event for the transition", () => {
    expect(result.events).toEqual([
      { type: "Normal", reason: "Provisioning", message: "Creating the cluster with Kubernetes 1.33.3" },
    ]);
  });
});

describe("provisioning", () => {
  const provisioning = afterWrites(aCluster(), stepClusterWrites(input(aCluster(), absent)));

  it("waits while the backend works, writing nothing new", () => {
    const result = stepClusterWrites(input(provisioning, provisioningAt("1.33.3")));
    expect(result.state).toBe("provisioning");
    expect(result.commands).toEqual([]);
    const next = afterWrites(provisioning, result);
    expect(stepClusterWrites(input(next, provisioningAt("1.33.3"))).statusPatch).toEqual([]);
  });

  it("orders the cluster again when the backend has none (a create that did not take)", () => {
    const result = stepClusterWrites(input(provisioning, absent));
    expect(result.commands.map((c) => c.kind)).toEqual(["create"]);
    expect(result.metadataPatch).toEqual([]);
  });

  it("becomes Ready with endpoint, version label and provider info once the backend is ready", () => {
    const result = stepClusterWrites(input(provisioning, readyAt("1.33.3")));
    expect(result.state).toBe("ready");
    const ready = afterWrites(provisioning, result);
    expect(ready.status?.phase).toBe("Ready");
    expect(ready.status?.endpoints).toEqual([{ name: "apiserver-external", url: "https://127.0.0.1:6443" }]);
    expect(ready.status?.apiServer).toBe("https://127.0.0.1:6443");
    expect(ready.metadata.labels?.[CLUSTER_LABELS.k8sVersion]).toBe("1.33.3");
    expect(ready.metadata.annotations?.[CLUSTER_ANNOTATIONS.providerInfo]).toBe("simulated 1.33.3");
    expect(result.requeueAfterMs).toBe(TIMING.resyncMs);
  });

  it("publishes the internal endpoint beside the external one when the backend has one (kind from a Pod)", () => {
    const observed = { ...readyAt("1.33.3"), internalEndpoint: "https://omc-1-control-plane:6443" };
    const ready = afterWrites(provisioning, stepClusterWrites(input(provisioning, observed)));
    expect(ready.status?.endpoints).toEqual([
      { name: "apiserver-external", url: "https://127.0.0.1:6443" },
      { name: "apiserver-internal", url: "https://omc-1-control-plane:6443" },
    ]);
    expect(ready.status?.apiServer).toBe("https://127.0.0.1:6443");
  });

  const readyWith = (condition: BackendCondition): ClusterObservation => ({
    exists: true,
    phase: "ready",
    version: "1.33.3",
    endpoint: "https://127.0.0.1:6443",
    conditions: [condition],
  });

  it("shows the backend's own conditions as they are, and is Ready only while they are all True", () => {
    const healthy = {
      type: "ShootControlPlaneHealthy",
      status: "True",
      reason: "Healthy",
      message: "fine",
    } as const;
    const ready = afterWrites(provisioning, stepClusterWrites(input(provisioning, readyWith(healthy))));
    expect(ready.status?.conditions).toContainEqual(expect.objectContaining(healthy));
    expect(ready.status?.phase).toBe("Ready");
    const sick = { ...healthy, status: "False", reason: "Unhealthy", message: "etcd down" } as const;
    const degraded = afterWrites(ready, stepClusterWrites(input(ready, readyWith(sick))));
    expect(degraded.status?.conditions).toContainEqual(expect.objectContaining(sick));
    expect(degraded.status?.phase).toBe("Progressing");
    // At rest with the same report: nothing to write.
    const again = stepClusterWrites(input(degraded, readyWith(sick)));
    expect([...again.metadataPatch, ...again.statusPatch]).toEqual([]);
  });

  it("does not call a backend that says ready without an endpoint ready", () => {
    const result = stepClusterWrites(
      input(provisioning, { exists: true, phase: "ready", version: "1.33.3" }),
    );
    expect(result.state).toBe("provisioning");
  });

  it("reports a failed backend command as a BackendError condition", () => {
    const result = stepClusterWrites(
      input(provisioning, absent, { lastError: "quota exceeded in region x" }),
    );
    const next = afterWrites(provisioning, result);
    expectCondition(next, {
      type: "ClusterReady",
      reason: "BackendError",
      message: "quota exceeded in region x",
    });
  });
});

describe("a Ready Cluster", () => {
  const ready = settle(aCluster(), readyAt("1.33.3")).cluster;

  it("says so when the backend reports it not ready any more (processes stopped), and is Ready again when it is", () => {
    const stopped: ClusterObservation = {
      exists: true,
      phase: "provisioning",
      version: "1.33.3",
      message: "its processes are not running",
    };
    const result = stepClusterWrites(input(ready, stopped));
    // The machine stays Ready (nothing is ordered: the cluster may come back), the condition and phase follow it.
    expect(result.state).toBe("ready");
    expect(result.commands).toEqual([]);
    const down = afterWrites(ready, result);
    expectCondition(down, {
      type: "ClusterReady",
      status: "False",
      reason: "BackendNotReady",
      message: "the backend reports the cluster provisioning: its processes are not running",
    });
    expect(down.status?.phase).toBe("Progressing");
    expect(result.events).toEqual([
      {
        type: "Warning",
        reason: "BackendNotReady",
        message: "The backend reports the cluster provisioning: its processes are not running",
      },
    ]);
    // Looked at again at the poll rate while it went down lately (most come back within seconds: a restart, a
    // rollback), at the retry rate once down that long; told once.
    expect(result.requeueAfterMs).toBe(TIMING.pollMs);
    const still = stepClusterWrites(input(down, stopped));
    expect([...still.metadataPatch, ...still.statusPatch, ...still.events]).toEqual([]);
    expect(still.requeueAfterMs).toBe(TIMING.pollMs);
    const later = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
    const justBefore = stepClusterWrites(input(down, stopped, { now: later(TIMING.retryMs - 1) }));
    expect(justBefore.requeueAfterMs).toBe(TIMING.pollMs);
    const longDown = stepClusterWrites(input(down, stopped, { now: later(TIMING.retryMs) }));
    expect([...longDown.metadataPatch, ...longDown.statusPatch, ...longDown.events]).toEqual([]);
    expect(longDown.requeueAfterMs).toBe(TIMING.retryMs);

    const back = stepClusterWrites(input(down, readyAt("1.33.3")));
    const up = afterWrites(down, back);
    expectCondition(up, { type: "ClusterReady", status: "True", reason: "Ready" });
    expect(up.status?.phase).toBe("Ready");
    expect(back.events).toEqual([
      { type: "Normal", reason: "Ready", message: "The cluster is ready again with Kubernetes 1.33.3" },
    ]);
    expect(back.requeueAfterMs).toBe(TIMING.resyncMs);
  });

  it("shows a look at the backend that failed on ClusterReady, moves nothing, and recovers with the next look", () => {
    const failed = unobservedStatus(
      ready,
      "Secret clusters/host-kubeconfig not found",
      "2026-11-21T10:05:00Z",
    );
    const blind = { ...ready, ...(failed ? { status: failed } : {}) } as Cluster;
    expectCondition(blind, {
      type: "ClusterReady",
      status: "False",
      reason: "ObserveFailed",
      message: "the backend could not be asked about the cluster: Secret clusters/host-kubeconfig not found",
    });
    expect(blind.status?.phase).toBe("Progressing");
    expect(blind.status?.providerStatus).toEqual(ready.status?.providerStatus); // the state stays
    expect(blind.status?.endpoints).toEqual(ready.status?.endpoints);
    // The same failure again: the same status (nothing to write).
    expect(
      unobservedStatus(blind, "Secret clusters/host-kubeconfig not found", "2026-11-21T10:06:00Z"),
    ).toEqual(blind.status);
    const back = stepClusterWrites(input(blind, readyAt("1.33.3")));
    expect(afterWrites(blind, back).status?.phase).toBe("Ready");
    expect(back.events.map((event) => event.reason)).toEqual(["Ready"]);
    // A Cluster no engine wrote a status for has nothing to correct.
    expect(unobservedStatus(aCluster(), "x", NOW)).toBeUndefined();
  });

  it("is at rest: another step changes nothing", () => {
    const result = stepClusterWrites(input(ready, readyAt("1.33.3")));
    expect(result).toMatchObject({
      state: "ready",
      metadataPatch: [],
      statusPatch: [],
      commands: [],
      events: [],
    });
  });

  it("goes through updating when the spec asks for a newer version, and back to Ready", () => {
    const older = settle(aCluster({ version: "1.32" }), readyAt("1.32.7")).cluster;
    const upgraded: Cluster = {
      ...older,
      metadata: { ...older.metadata, generation: 2 },
      spec: { ...older.spec, kubernetes: { version: "1.33" } },
    };
    const result = stepClusterWrites(input(upgraded, readyAt("1.32.7")));
    expect(result.state).toBe("updating");
    expect(result.commands.map((c) => [c.kind, "version" in c ? c.version : ""])).toEqual([
      ["update", "1.33.3"],
    ]);
    const updating = afterWrites(upgraded, result);
    expect(updating.status?.observedGeneration).toBe(2);
    const done = stepClusterWrites(input(updating, readyAt("1.33.3")));
    expect(done.state).toBe("ready");
  });

  it("orders an update at the same version when the backend says the cluster is out of date, and is Ready again once it is not", () => {
    const outOfDate: ClusterObservation = {
      ...(readyAt("1.33.3") as object),
      outOfDate: true,
    } as ClusterObservation;
    const result = stepClusterWrites(input(ready, outOfDate));
    expect(result.state).toBe("updating");
    expect(result.commands.map((c) => [c.kind, "version" in c ? c.version : ""])).toEqual([
      ["update", "1.33.3"],
    ]);
    const updating = afterWrites(ready, result);
    expect(stepClusterWrites(input(updating, outOfDate)).commands.map((c) => c.kind)).toEqual(["update"]);
    expect(stepClusterWrites(input(updating, readyAt("1.33.3"))).state).toBe("ready");
  });

  it("refuses a downgrade with a condition and no backend call", () => {
    const downgraded: Cluster = { ...ready, spec: { ...ready.spec, kubernetes: { version: "1.32" } } };
    const result = stepClusterWrites(input(downgraded, readyAt("1.33.3")));
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    const failed = afterWrites(downgraded, result);
    expect(failed.status?.phase).toBe("Progressing");
    expectCondition(failed, { type: "VersionSupported", status: "False", reason: "DowngradeNotAllowed" });
  });

  const failedAt = (outOfDate: boolean): ClusterObservation => ({
    exists: true,
    phase: "failed",
    version: "1.33.3",
    message: "kube-apiserver exited",
    ...(outOfDate ? { outOfDate: true } : {}),
  });

  it("leaves a cluster failed with what it asks failed, and updates one failed with what it no longer asks", () => {
    const asAsked = stepClusterWrites(input(ready, failedAt(false)));
    expect(asAsked.state).toBe("failed");
    expect(asAsked.commands).toEqual([]);
    const failed = afterWrites(ready, asAsked);
    expect(stepClusterWrites(input(failed, failedAt(false))).commands).toEqual([]);
    // E.g. a settings Rollout it failed with deleted: its target asks for the config's settings again.
    const repair = stepClusterWrites(input(failed, failedAt(true)));
    expect(repair.state).toBe("updating");
    expect(repair.commands).toEqual([{ kind: "update", version: "1.33.3" }]);
    const updating = afterWrites(failed, repair);
    // Still failed with what it no longer asks (the update did not take): ordered again; failed as asked: failed.
    expect(stepClusterWrites(input(updating, failedAt(true))).commands).toEqual([
      { kind: "update", version: "1.33.3" },
    ]);
    expect(stepClusterWrites(input(updating, failedAt(false))).state).toBe("failed");
    expect(stepClusterWrites(input(updating, readyAt("1.33.3"))).state).toBe("ready");
  });

  it("looks again at a cluster the backend reports failed, and leaves failed by itself once the backend recovers", () => {
    // E.g. the local backend: a start that timed out under load is retried by the backend after a back-off, with no
    // change to the Cluster that would wake it.
    const failedAtBackend = failedAt(false);
    const result = stepClusterWrites(input(ready, failedAtBackend));
    expect(result.state).toBe("failed");
    expect(result.requeueAfterMs).toBe(TIMING.retryMs);
    const failed = afterWrites(ready, result);
    expect(stepClusterWrites(input(failed, failedAtBackend)).requeueAfterMs).toBe(TIMING.retryMs);
    const recovered = settle(failed, readyAt("1.33.3")).cluster;
    expect(recovered.status?.phase).toBe("Ready");
  });

  it("re-creates a cluster that vanished at the backend", () => {
    const result = stepClusterWrites(input(ready, absent));
    expect(result.state).toBe("provisioning");
    expect(result.commands.map((c) => c.kind)).toEqual(["create"]);
  });
});

describe("versions", () => {
  it("rejects an unsupported version with a clear condition and no backend call or finalizer", () => {
    const result = stepClusterWrites(input(aCluster({ version: "1.20" }), absent));
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    const failed = afterWrites(aCluster({ version: "1.20" }), result);
    expect(failed.metadata.finalizers).toBeUndefined();
    expectCondition(failed, {
      type: "VersionSupported",
      status: "False",
      reason: "UnsupportedVersion",
      message: "Kubernetes 1.20 is not offered by this profile; supported: 1.33.3, 1.33.2, 1.32.7",
    });
  });

  it("recovers once the spec asks for a supported version", () => {
    const failed = settle(aCluster({ version: "1.20" })).cluster;
    const fixed: Cluster = { ...failed, spec: { ...failed.spec, kubernetes: { version: "1.32" } } };
    const result = stepClusterWrites(input(fixed, absent));
    expect(result.state).toBe("provisioning");
    expect(result.commands).toMatchObject([{ kind: "create", version: "1.32.7" }]);
  });

  it("accepts a deprecated version with a warning on a True condition, so the Cluster can still be Ready", () => {
    const ready = settle(aCluster({ version: "1.33.2" }), readyAt("1.33.2")).cluster;
    expect(ready.status?.phase).toBe("Ready");
    expectCondition(ready, { type: "VersionSupported", status: "True", reason: "DeprecatedVersion" });
  });
});

describe("responsibility", () => {
  // Responsibility is decided once, before any step: the kind's `open` steps only Clusters that are
  // ours or whose profile is missing (test/integration/cluster-controller.test.ts shows no write reaches a foreign one).
  it("never touches a Cluster whose profile belongs to another provider", () => {
    expect(clusterResponsibility(aCluster(), aProfile("someone-else"), CLAIMANT)).toBe("foreign");
  });

  it("skips a Cluster annotated openmcp.cloud/operation=ignore", () => {
    const ignored = aCluster();
    const cluster = {
      ...ignored,
      metadata: { ...ignored.metadata, annotations: { [ANNOTATIONS.operation]: "ignore" } },
    };
    expect(clusterResponsibility(cluster, aProfile(), CLAIMANT)).toBe("ignored");
  });

  it("reports a missing profile on a condition, retries, and neither labels nor orders anything", () => {
    expect(clusterResponsibility(aCluster(), undefined, CLAIMANT)).toBe("profileMissing");
    const result = stepClusterWrites(input(aCluster(), absent, { profile: undefined }));
    expect(result.commands).toEqual([]);
    expect(result.metadataPatch).toEqual([]);
    expect(result.requeueAfterMs).toBe(TIMING.retryMs);
    const waiting = afterWrites(aCluster(), result);
    expectCondition(waiting, { type: "ProfileResolved", status: "False", reason: "ProfileNotFound" });
  });

  it("names the ProviderConfig that cannot publish its missing profile, and its problem, not spec.profile", () => {
    const unpublished = {
      config: "small",
      reason: "ConfigurationProblem",
      message: "settings.zone must be a string",
    };
    const result = stepClusterWrites(input(aCluster(), absent, { profile: undefined, unpublished }));
    expectCondition(afterWrites(aCluster(), result), {
      type: "ProfileResolved",
      status: "False",
      reason: "ProviderConfigNotReady",
      message:
        'ClusterProfile "test.engine-test.small" is not published: ProviderConfig "small" is not Ready (ConfigurationProblem: settings.zone must be a string); fix the ProviderConfig (retrying)',
    });
    expect(result.commands).toEqual([]);
  });

  it("removes the reconcile annotation after the reconcile it asked for", () => {
    const base = settle(aCluster(), readyAt("1.33.3")).cluster;
    const asked = {
      ...base,
      metadata: { ...base.metadata, annotations: { [ANNOTATIONS.operation]: "reconcile" } },
    };
    const result = stepClusterWrites(input(asked, readyAt("1.33.3")));
    expect(result.metadataPatch).toContainEqual({
      op: "remove",
      path: "/metadata/annotations/openmcp.cloud~1operation",
    });
  });

  it("keeps the reconcile annotation while the reconcile it asked for still orders the backend, removes it once done", () => {
    const base = settle(aCluster(), readyAt("1.33.3")).cluster;
    const asked = {
      ...base,
      metadata: { ...base.metadata, annotations: { [ANNOTATIONS.operation]: "reconcile" } },
    };
    // E.g. a platform service's new ClusterConfig patches: the backend finds the cluster out of date.
    const outOfDate: ClusterObservation = {
      exists: true,
      phase: "ready",
      version: "1.33.3",
      endpoint: "https://127.0.0.1:6443",
      outOfDate: true,
    };
    const acting = stepClusterWrites(input(asked, outOfDate));
    expect(acting.commands.map((command) => command.kind)).toContain("update");
    expect(acting.metadataPatch).not.toContainEqual(
      expect.objectContaining({ path: "/metadata/annotations/openmcp.cloud~1operation" }),
    );
    const done = stepClusterWrites(input(afterWrites(asked, acting), readyAt("1.33.3")));
    expect(done.commands).toEqual([]);
    expect(done.metadataPatch).toContainEqual({
      op: "remove",
      path: "/metadata/annotations/openmcp.cloud~1operation",
    });
  });
});

describe("deletion", () => {
  const ready = settle(aCluster(), readyAt("1.33.3")).cluster;

  it("waits for foreign finalizers, naming them, before touching the backend", () => {
    const blocked = deleted(ready, [
      ...(ready.metadata.finalizers ?? []),
      "request.clusters.openmcp.cloud/abc",
    ]);
    const result = stepClusterWrites(input(blocked, readyAt("1.33.3")));
    expect(result.state).toBe("deleting.blocked");
    expect(result.commands).toEqual([]);
    const next = afterWrites(blocked, result);
    expect(next.status?.phase).toBe("Terminating");
    expectCondition(next, {
      type: "DeletionUnblocked",
      status: "False",
      reason: "WaitingForForeignFinalizers",
      message: "waiting for finalizers: request.clusters.openmcp.cloud/abc",
    });
  });

  it("deletes at the backend and keeps the finalizer until the backend reports the cluster gone", () => {
    const deleting = deleted(ready);
    const first = stepClusterWrites(input(deleting, readyAt("1.33.3")));
    expect(first.state).toBe("deleting.releasing");
    expect(first.commands.map((c) => c.kind)).toEqual(["delete"]);
    expect(first.metadataPatch).toEqual([]);
    const releasing = afterWrites(deleting, first);
    const waiting = stepClusterWrites(
      input(releasing, { exists: true, phase: "deleting", version: "1.33.3" }),
    );
    expect(waiting.commands).toEqual([]);
    const gone = stepClusterWrites(input(releasing, absent));
    expect(gone.state).toBe("deleting.released");
    expect(gone.metadataPatch).toContainEqual({ op: "remove", path: "/metadata/finalizers/0" });
  });

  it("lets go at once of a Cluster that never got our finalizer", () => {
    const result = stepClusterWrites(input(deleted(aCluster(), ["someone/else"]), absent));
    expect(result.commands).toEqual([]);
    expect(result.metadataPatch).toEqual([]);
  });
});

describe("a cluster the backend reports incomplete (contract 1.2)", () => {
  const missing = "ServiceAccount tenant-admin is missing";
  const incomplete: ClusterObservation = {
    exists: true,
    phase: "provisioning",
    version: "1.33.3",
    incomplete: missing,
  };

  it("orders create again from Ready and says so: a Warning Event and a Repairing condition", () => {
    const ready = settle(aCluster(), readyAt("1.33.3")).cluster;
    expect(ready.status?.phase).toBe("Ready");
    const result = stepClusterWrites(input(ready, incomplete));
    expect(result.state).toBe("provisioning");
    expect(result.commands).toEqual([{ kind: "create", version: "1.33.3" }]);
    expect(result.events).toContainEqual(
      expect.objectContaining({
        type: "Warning",
        reason: "Repairing",
        message: expect.stringContaining(missing),
      }),
    );
    expect(afterWrites(ready, result).status?.conditions).toContainEqual(
      expect.objectContaining({
        type: "ClusterReady",
        status: "False",
        reason: "Repairing",
        message: `the backend reports the cluster incomplete: ${missing}; creating what is missing`,
      }),
    );
  });

  it("keeps ordering create while it stays incomplete, where a merely provisioning one only waits", () => {
    const repairing = settle(aCluster(), incomplete).cluster;
    expect(stepClusterWrites(input(repairing, incomplete)).commands).toEqual([
      { kind: "create", version: "1.33.3" },
    ]);
    const building = settle(aCluster(), provisioningAt("1.33.3")).cluster;
    expect(stepClusterWrites(input(building, provisioningAt("1.33.3"))).commands).toEqual([]);
  });

  it("goes Ready once the backend reports it whole, and never repairs one being deleted", () => {
    const repairing = settle(aCluster(), incomplete).cluster;
    expect(settle(repairing, readyAt("1.33.3")).cluster.status?.phase).toBe("Ready");
    const deleting = deleted(settle(aCluster(), readyAt("1.33.3")).cluster);
    const result = stepClusterWrites(
      input(deleting, {
        exists: true,
        phase: "deleting",
        version: "1.33.3",
        incomplete: missing,
      }),
    );
    expect(result.commands.some((command) => command.kind === "create")).toBe(false);
  });
});
