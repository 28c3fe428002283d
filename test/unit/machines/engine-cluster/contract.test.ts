/** The EngineCluster step (Cluster API's InfraCluster contract), transition by transition: all pure. */
import { describe, expect, it } from "vitest";
import { CAPI_ANNOTATIONS } from "../../../../src/api/cluster-api.ts";
import { ENGINE_CLUSTER_FINALIZERS } from "../../../../src/api/constants/capi.ts";
import { ANNOTATIONS, LABELS } from "../../../../src/api/constants.ts";
import type { EngineCluster } from "../../../../src/api/engine-cluster.ts";
import { stepCluster } from "../../../../src/machines/cluster/step.ts";
import {
  engineClusterResponsibility,
  engineClusterTarget,
  pausedBy,
  stepEngineCluster,
  stepPausedEngineCluster,
  unobservedEngineClusterStatus,
} from "../../../../src/machines/engine-cluster/contract.ts";
import { aCluster, aProfile, input } from "../../../support/cluster-fixtures.ts";
import { conditionOf } from "../../../support/conditions.ts";
import {
  anEngineCluster,
  CLAIMANT,
  engineInput,
  expectWaitingForOwner,
  NOW,
  published,
  readyBackend,
  TIMING,
  unpublished,
} from "../../../support/engine-cluster-fixtures.ts";
import { afterWrites, writesOf } from "../../../support/step-writes.ts";

const absent = { exists: false } as const;

/** Steps a cluster through a sequence of worlds, applying each step's writes. */
function run(
  cluster: EngineCluster,
  worlds: Array<Parameters<typeof engineInput>[1]>,
  publication = unpublished,
) {
  let current = cluster;
  let result = stepEngineCluster(engineInput(current, absent));
  for (const backend of worlds) {
    result = stepEngineCluster(engineInput(current, backend, publication));
    current = afterWrites(current, result);
  }
  return { cluster: current, result };
}

describe("an EngineCluster no CAPI Cluster owns yet", () => {
  const result = stepEngineCluster(engineInput(anEngineCluster({ owned: false }), absent));

  it("stays pending: no finalizer, no command, a Ready condition naming what it waits for", () => {
    const ready = expectWaitingForOwner(result, "Ready");
    expect(ready?.message).toContain("EngineCluster capi/workload");
    expect(ready?.message).toContain("spec.infrastructureRef");
    expect(result.desired.status).toMatchObject({ phase: "Pending", initialization: { provisioned: false } });
  });
});

describe("an owned EngineCluster naming a profile that does not exist", () => {
  const base = anEngineCluster();
  const typo: EngineCluster = { ...base, spec: { ...base.spec, profile: "tpyo" } };
  const result = stepEngineCluster({
    ...engineInput(typo, absent),
    profile: undefined,
    knownProfiles: ["dev.engine-test.large", "dev.engine-test.small"],
  });

  it("is ours to answer: a Ready condition naming the profile and those that exist, and our provider label", () => {
    expect(engineClusterResponsibility(typo, undefined, CLAIMANT, false)).toBe("ours");
    expect(result.state).toBe("pending");
    expect(result.commands).toEqual([]);
    expect(result.desired.metadata.finalizers).toBeUndefined();
    expect(result.desired.metadata.labels?.[LABELS.provider]).toBe("engine-test");
    expect(conditionOf({ status: result.desired.status }, "Ready")).toMatchObject({
      status: "False",
      reason: "ProfileNotFound",
      message:
        'ClusterProfile "tpyo" does not exist; fix spec.profile or create it (this provider\'s profiles: dev.engine-test.large, dev.engine-test.small; retrying)',
    });
  });

  it("is left to the engine that labelled it first: a second provider's engine does not answer", () => {
    const claimed = afterWrites(typo, result);
    const other = { ...CLAIMANT, providerName: "other-provider" };
    expect(engineClusterResponsibility(claimed, undefined, other, false)).toBe("foreign");
    expect(engineClusterResponsibility(claimed, undefined, CLAIMANT, false)).toBe("ours");
  });
});

describe("an owned EngineCluster", () => {
  const cluster = anEngineCluster();
  const first = stepEngineCluster(engineInput(cluster, absent));

  it("orders the cluster in the step that adds the finalizer", () => {
    expect(first.state).toBe("provisioning");
    expect(first.desired.metadata.finalizers).toEqual([ENGINE_CLUSTER_FINALIZERS.engineCluster]);
    expect(first.commands).toEqual([{ kind: "create", version: "1.33.3" }]);
    // The backend's target is built once per reconcile (by the kind's `open`), not carried in each command.
    expect(engineClusterTarget(cluster, aProfile())).toEqual({
      uid: cluster.metadata.uid,
      namespace: "capi",
      name: "workload",
      tenancy: "Exclusive",
      profile: aProfile().metadata.name,
      providerConfig: "small",
    });
    expect(first.desired.metadata.labels?.[LABELS.provider]).toBe("engine-test");
    expect(first.requeueAfterMs).toBe(TIMING.pollMs);
  });

  it("adopts a cluster the backend already holds (a restart mid-provisioning) instead of ordering it again", () => {
    const adopted = stepEngineCluster(
      engineInput(cluster, { exists: true, phase: "provisioning", version: "1.33.3" }),
    );
    expect(adopted.state).toBe("provisioning");
    expect(adopted.desired.metadata.finalizers).toEqual([ENGINE_CLUSTER_FINALIZERS.engineCluster]);
    expect(adopted.commands).toEqual([]);
  });

  it("sets controlPlaneEndpoint once the backend is ready, reports provisioned and publishes", () => {
    const { cluster: provisioned, result } = run(cluster, [absent, readyBackend("https://10.0.0.7:7443")]);
    expect(result.state).toBe("provisioned");
    expect(provisioned.spec.controlPlaneEndpoint).toEqual({ host: "10.0.0.7", port: 7443 });
    expect(provisioned.status).toMatchObject({
      phase: "Provisioned",
      initialization: { provisioned: true },
      ready: true,
      version: "1.33.3",
    });
    expect(conditionOf(provisioned, "Ready")).toMatchObject({ status: "True", reason: "Ready" });
    expect(conditionOf(provisioned, "Paused")).toMatchObject({ status: "False", reason: "NotPaused" });
    expect(result.commands).toEqual([
      expect.objectContaining({
        kind: "publish",
        capiCluster: "workload",
        endpoint: { host: "10.0.0.7", port: 7443 },
        kubeconfig: true,
      }),
    ]);
  });

  it("at rest, with everything published, writes nothing and commands nothing", () => {
    const { cluster: provisioned } = run(cluster, [absent, readyBackend()]);
    const again = stepEngineCluster(engineInput(provisioned, readyBackend(), published));
    expect(again.commands).toEqual([]);
    expect(writesOf(provisioned, again)).toEqual({ metadataPatch: [], specPatch: [], statusPatch: [] });
    expect(again.requeueAfterMs).toBe(TIMING.resyncMs);
  });

  it("publishes again when the kubeconfig Secret or the ClusterEndpoint went missing", () => {
    const { cluster: provisioned } = run(cluster, [absent, readyBackend()]);
    const missing = stepEngineCluster(
      engineInput(provisioned, readyBackend(), { kubeconfig: "missing", endpointCurrent: true }),
    );
    expect(missing.commands.map((c) => c.kind)).toEqual(["publish"]);
    const foreign = stepEngineCluster(
      engineInput(provisioned, readyBackend(), { kubeconfig: "notOurs", endpointCurrent: true }),
    );
    expect(foreign.commands).toEqual([]); // someone else's Secret of that name is never overwritten
  });

  it("never changes a published endpoint: a moved backend is reported, not followed", () => {
    const { cluster: provisioned } = run(cluster, [absent, readyBackend("https://10.0.0.7:7443")]);
    const moved = stepEngineCluster(
      engineInput(provisioned, readyBackend("https://10.0.0.8:7443"), published),
    );
    expect(moved.desired.spec).toBeUndefined();
    expect(moved.desired.status?.initialization?.provisioned).toBe(true);
    const ready = moved.desired.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "EndpointMoved" });
    expect(ready?.message).toContain("10.0.0.8:7443");
  });

  it("says Ready=False while the backend reports it not ready, or cannot be asked, and stays provisioned", () => {
    const { cluster: provisioned } = run(cluster, [absent, readyBackend()], published);
    const stopped = stepEngineCluster(
      engineInput(
        provisioned,
        { ...readyBackend(), phase: "provisioning", message: "node stopped" },
        published,
      ),
    );
    expect(stopped.state).toBe("provisioned");
    expect(stopped.commands).toEqual([]);
    expect(conditionOf(afterWrites(provisioned, stopped), "Ready")).toMatchObject({
      status: "False",
      reason: "BackendNotReady",
      message: "the backend reports the cluster provisioning: node stopped",
    });
    const blind = unobservedEngineClusterStatus(provisioned, "credentials gone", NOW);
    expect(blind?.state).toBe("provisioned");
    expect(blind?.initialization?.provisioned).toBe(true); // "came up once" is never taken back
    expect(conditionOf({ ...(blind ? { status: blind } : {}) }, "Ready")).toMatchObject({
      status: "False",
      reason: "ObserveFailed",
      message: "the backend could not be asked about the cluster: credentials gone",
    });
    expect(unobservedEngineClusterStatus(anEngineCluster(), "x", NOW)).toBeUndefined();
  });

  it("shows the backend's failure domains", () => {
    const { cluster: provisioned } = run(cluster, [
      absent,
      { ...readyBackend(), failureDomains: [{ name: "zone-a", controlPlane: true }] },
    ]);
    expect(provisioned.status?.failureDomains).toEqual([{ name: "zone-a", controlPlane: true }]);
  });

  it("refuses a version its profile does not offer, with the offered ones named", () => {
    const result = stepEngineCluster(engineInput(anEngineCluster({ version: "1.20" }), absent));
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    const ready = result.desired.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "UnsupportedVersion" });
    expect(ready?.message).toContain("1.33.3");
  });
});

describe("pausing and external management", () => {
  // Responsibility is decided once, by the kind's `open`: a paused EngineCluster gets the paused step.
  const pausedStep = (cluster: EngineCluster, ownerPaused = false) => {
    expect(engineClusterResponsibility(cluster, aProfile(), CLAIMANT, ownerPaused)).toBe("paused");
    return stepPausedEngineCluster({ cluster, why: pausedBy(cluster, ownerPaused) ?? "", now: NOW });
  };

  it("a paused EngineCluster only says so: state, spec, metadata unchanged, no command", () => {
    const cluster = anEngineCluster({ annotations: { [CAPI_ANNOTATIONS.paused]: "" } });
    const result = pausedStep(cluster);
    expect(result.commands).toEqual([]);
    const writes = writesOf(cluster, result);
    expect(writes.metadataPatch).toEqual([]);
    expect(writes.specPatch).toEqual([]);
    expect(result.desired.status?.conditions).toEqual([
      expect.objectContaining({ type: "Paused", status: "True", reason: "Paused" }),
    ]);
    expect(result.desired.status?.state).toBeUndefined();
  });

  it("a Cluster with spec.paused pauses the EngineCluster it owns, naming the Cluster", () => {
    const cluster = anEngineCluster();
    const result = pausedStep(cluster, true);
    expect(result.commands).toEqual([]);
    expect(result.desired.status?.conditions?.[0]?.message).toContain(
      "Cluster workload has spec.paused: true",
    );
  });

  it("an externally managed EngineCluster is not written at all", () => {
    const cluster = anEngineCluster({ annotations: { [CAPI_ANNOTATIONS.managedBy]: "someone" } });
    // Not ours: the kind's `open` gives it no reconciliation, so no write and no command.
    expect(engineClusterResponsibility(cluster, aProfile(), CLAIMANT, false)).toBe("externallyManaged");
  });

  it("one carrying our finalizer stays ours when marked externally managed later, so what was built can go", () => {
    const ours = { finalizers: [ENGINE_CLUSTER_FINALIZERS.engineCluster] };
    const managed = anEngineCluster({ ...ours, annotations: { [CAPI_ANNOTATIONS.managedBy]: "someone" } });
    expect(engineClusterResponsibility(managed, aProfile(), CLAIMANT, false)).toBe("ours");
    expect(engineClusterResponsibility(anEngineCluster(ours), undefined, CLAIMANT, false)).toBe("ours");
    // Every provider's engines use that finalizer name: another provider's profile keeps it foreign.
    expect(engineClusterResponsibility(anEngineCluster(ours), aProfile("other"), CLAIMANT, false)).toBe(
      "foreign",
    );
    // `operation: ignore` lets go even of ours, as of a Cluster.
    const ignored = anEngineCluster({ ...ours, annotations: { [ANNOTATIONS.operation]: "ignore" } });
    expect(engineClusterResponsibility(ignored, aProfile(), CLAIMANT, false)).toBe("ignored");
  });
});

describe("deletion through the CAPI Cluster", () => {
  it("unpublishes and deletes at the backend, and lets go only once the backend reports it gone", () => {
    const { cluster: provisioned } = run(anEngineCluster(), [absent, readyBackend()]);
    const deleting: EngineCluster = {
      ...provisioned,
      metadata: { ...provisioned.metadata, deletionTimestamp: NOW },
    };
    const releasing = stepEngineCluster(engineInput(deleting, readyBackend(), published));
    expect(releasing.state).toBe("deleting.releasing");
    expect(releasing.commands.map((c) => c.kind)).toEqual(["unpublish", "delete"]);
    expect(releasing.desired.metadata.finalizers).toEqual([ENGINE_CLUSTER_FINALIZERS.engineCluster]);
    const next = afterWrites(deleting, releasing);
    const released = stepEngineCluster(engineInput(next, absent, unpublished));
    expect(released.state).toBe("deleting.released");
    expect(released.desired.metadata.finalizers).toEqual([]);
  });

  it("an EngineCluster deleted before anything was built lets go at once, calling nothing", () => {
    const cluster: EngineCluster = {
      ...anEngineCluster({ owned: false }),
      metadata: { ...anEngineCluster({ owned: false }).metadata, deletionTimestamp: NOW },
    };
    const result = stepEngineCluster(engineInput(cluster, absent));
    expect(result.state).toBe("deleting.released");
    expect(result.commands).toEqual([]);
  });
});

describe("the version an EngineCluster and a Cluster are built with", () => {
  // Both resolve it through backend-cluster/backend-cluster.ts: an empty version (which the CRDs accept) is no version.
  it("is the ProviderConfig's defaultVersion when spec.kubernetes.version is empty, as for a Cluster", () => {
    const base = anEngineCluster();
    const empty: EngineCluster = { ...base, spec: { ...base.spec, kubernetes: { version: "" } } };
    const result = stepEngineCluster(engineInput(empty, absent, unpublished, { defaultVersion: "1.32.7" }));
    expect(result.commands).toEqual([{ kind: "create", version: "1.32.7" }]);

    const cluster = aCluster();
    const emptyCluster = { ...cluster, spec: { ...cluster.spec, kubernetes: { version: "" } } };
    const forCluster = stepCluster(input(emptyCluster, absent, { defaultVersion: "1.32.7" }));
    expect(forCluster.commands).toEqual([{ kind: "create", version: "1.32.7" }]);
  });
});
