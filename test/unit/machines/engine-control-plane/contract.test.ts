/** The EngineControlPlane step (Cluster API's ControlPlane contract for a managed control plane), transition by transition: all pure. */
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../../src/api/backend.ts";
import type { CapiCluster } from "../../../../src/api/cluster-api.ts";
import { LABELS } from "../../../../src/api/constants.ts";
import {
  ENGINE_CONTROL_PLANE_FINALIZER,
  type EngineControlPlane,
} from "../../../../src/api/engine-control-plane.ts";
import type { CapiOwnedPublication } from "../../../../src/machines/capi-owned/contract.ts";
import {
  controlPlanePausedBy,
  type EngineControlPlaneStepInput,
  type EngineControlPlaneStepResult,
  engineControlPlaneResponsibility,
  stepEngineControlPlane,
  stepPausedEngineControlPlane,
} from "../../../../src/machines/engine-control-plane/contract.ts";
import { applied as withOperations } from "../../../../src/machines/shared/json-patch.ts";
import { changesTo } from "../../../../src/runtime/api-server/patch-object.ts";
import { anEngineControlPlane, stored } from "../../../support/builders.ts";
import { aProfile, CLAIMANT, NOW, PROVIDER, TIMING } from "../../../support/cluster-fixtures.ts";
import { conditionOf } from "../../../support/conditions.ts";
import { expectWaitingForOwner } from "../../../support/engine-cluster-fixtures.ts";

const absent: ClusterObservation = { exists: false };
const at = (
  phase: "provisioning" | "ready" | "updating" | "failed" | "deleting",
  version = "1.33.3",
): ClusterObservation => ({ exists: true, phase, version, endpoint: "https://10.0.0.7:6443" });
const unpublished: CapiOwnedPublication = { kubeconfig: "missing", endpointCurrent: false };
const published: CapiOwnedPublication = { kubeconfig: "current", endpointCurrent: true };

/** The CAPI Cluster owning the control plane; its infrastructure provisioned unless told otherwise. */
const aCapiCluster = (props: { infrastructure?: boolean; paused?: boolean } = {}): CapiCluster => ({
  metadata: { name: "workload", namespace: "capi" },
  spec: { ...(props.paused ? { paused: true } : {}) },
  status: { initialization: { infrastructureProvisioned: props.infrastructure ?? true } },
});

/** Our EngineControlPlane as the API server holds it; owned by the CAPI Cluster `workload` unless `owned` is false. */
function aControlPlane(
  props: { owned?: boolean; version?: string; annotations?: Record<string, string> } = {},
): EngineControlPlane {
  const { owned, ...rest } = props;
  return stored(
    anEngineControlPlane({
      profile: aProfile().metadata.name ?? "",
      ...rest,
      ...(owned === false ? {} : { owner: "workload" }),
    }),
    { uid: "ec000000-0000-4000-8000-000000000001" },
  );
}

function input(
  controlPlane: EngineControlPlane,
  backend: ClusterObservation,
  extra: Partial<EngineControlPlaneStepInput> & { publication?: CapiOwnedPublication } = {},
): EngineControlPlaneStepInput {
  const { publication, ...rest } = extra;
  return {
    controlPlane,
    owner: aCapiCluster(),
    profile: aProfile(),
    providerName: PROVIDER,
    observation: { backend, publication: publication ?? unpublished },
    now: NOW,
    timing: TIMING,
    ...rest,
  };
}

/** What the API server would hold after the step's writes (metadata, owned spec, status). */
function applied(controlPlane: EngineControlPlane, result: EngineControlPlaneStepResult): EngineControlPlane {
  let next = controlPlane;
  for (const part of ["metadata", "spec", "status"] as const) {
    const patch = changesTo(next, part, result.desired[part]);
    if (patch.length > 0) next = withOperations(next, patch);
  }
  return next;
}

/** Steps a control plane through worlds, applying each step's writes. */
function run(
  controlPlane: EngineControlPlane,
  worlds: ReadonlyArray<[ClusterObservation, CapiOwnedPublication?]>,
  extra: Partial<EngineControlPlaneStepInput> = {},
) {
  let current = controlPlane;
  let result: EngineControlPlaneStepResult | undefined;
  const commands: EngineControlPlaneStepResult["commands"][number][] = [];
  for (const [backend, publication] of worlds) {
    result = stepEngineControlPlane(
      input(current, backend, { ...extra, publication: publication ?? unpublished }),
    );
    commands.push(...result.commands);
    current = applied(current, result);
  }
  return { controlPlane: current, result: result as EngineControlPlaneStepResult, commands };
}

describe("an EngineControlPlane before it may build", () => {
  it("waits for a CAPI Cluster to own it: no finalizer, no command, Available False naming controlPlaneRef", () => {
    const result = stepEngineControlPlane(
      input(aControlPlane({ owned: false }), absent, { owner: undefined }),
    );
    const available = expectWaitingForOwner(result, "Available");
    expect(available?.message).toContain("spec.controlPlaneRef");
    expect(result.desired.status).toMatchObject({
      phase: "Pending",
      initialization: { controlPlaneInitialized: false },
      externalManagedControlPlane: true,
    });
  });

  it("waits for its Cluster's infrastructure when the Cluster has an infrastructureRef not yet provisioned", () => {
    const result = stepEngineControlPlane(
      input(aControlPlane(), absent, { owner: aCapiCluster({ infrastructure: false }) }),
    );
    expect(result.state).toBe("pending");
    expect(result.commands).toEqual([]);
    expect(conditionOf({ status: result.desired.status }, "Available")).toMatchObject({
      reason: "WaitingForInfrastructure",
    });
  });

  it("fails without building when spec.version is not offered, saying which versions are", () => {
    const result = stepEngineControlPlane(input(aControlPlane({ version: "1.20" }), absent));
    expect(result.state).toBe("failed");
    expect(result.commands).toEqual([]);
    const upToDate = conditionOf({ status: result.desired.status }, "UpToDate");
    expect(upToDate).toMatchObject({ status: "False", reason: "UnsupportedVersion" });
    expect(upToDate?.message).toContain("1.20");
    expect(result.events).toContainEqual(expect.objectContaining({ type: "Warning" }));
  });
});

describe("an owned EngineControlPlane, from order to Available", () => {
  it("orders the cluster with our finalizer, then publishes and sets the endpoint once it is ready", () => {
    const ordered = stepEngineControlPlane(input(aControlPlane(), absent));
    expect(ordered.state).toBe("provisioning");
    expect(ordered.commands).toEqual([{ kind: "create", version: "1.33.3" }]);
    expect(ordered.desired.metadata.finalizers).toEqual([ENGINE_CONTROL_PLANE_FINALIZER]);
    expect(ordered.desired.metadata.labels?.[LABELS.provider]).toBe(PROVIDER);

    const { controlPlane, result } = run(aControlPlane(), [[absent], [at("provisioning")], [at("ready")]]);
    expect(result.state).toBe("running.ready");
    expect(result.commands).toEqual([
      {
        kind: "publish",
        capiCluster: "workload",
        endpoint: { host: "10.0.0.7", port: 6443 },
        kubeconfig: true,
      },
    ]);
    expect(controlPlane.spec.controlPlaneEndpoint).toEqual({ host: "10.0.0.7", port: 6443 });
    expect(controlPlane.status).toMatchObject({
      phase: "Ready",
      initialization: { controlPlaneInitialized: true },
      initialized: true,
      ready: true,
      version: "v1.33.3",
      versions: [{ version: "v1.33.3" }],
    });
    expect(conditionOf(controlPlane, "Available")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(controlPlane, "UpToDate")).toMatchObject({ status: "True" });
    expect(conditionOf(controlPlane, "RollingOut")).toMatchObject({ status: "False" });
  });

  it("at rest with everything published, a second step desires the object as it is", () => {
    const { controlPlane } = run(aControlPlane(), [[absent], [at("ready")], [at("ready"), published]]);
    const again = stepEngineControlPlane(input(controlPlane, at("ready"), { publication: published }));
    expect(again.commands).toEqual([]);
    expect(applied(controlPlane, again)).toEqual(controlPlane);
    expect(again.requeueAfterMs).toBe(TIMING.resyncMs);
  });

  it("publishes again, in place, when the Secret went, the credentials rotated or the ClusterEndpoint is stale", () => {
    const { controlPlane } = run(aControlPlane(), [[absent], [at("ready")], [at("ready"), published]]);
    for (const publication of [
      { kubeconfig: "missing", endpointCurrent: true },
      { kubeconfig: "stale", endpointCurrent: true },
      { kubeconfig: "current", endpointCurrent: false },
    ] as const) {
      const result = stepEngineControlPlane(input(controlPlane, at("ready"), { publication }));
      expect(result.state, publication.kubeconfig).toBe("running.ready");
      expect(result.commands).toEqual([expect.objectContaining({ kind: "publish", kubeconfig: true })]);
    }
  });

  it("never writes a Secret someone else owns, nor publishes again because of it", () => {
    const { controlPlane } = run(aControlPlane(), [[absent], [at("ready")], [at("ready"), published]]);
    const result = stepEngineControlPlane(
      input(controlPlane, at("ready"), { publication: { kubeconfig: "notOurs", endpointCurrent: true } }),
    );
    expect(result.commands).toEqual([]);
  });

  it("keeps the endpoint it published when the backend moves, saying so in Available", () => {
    const { controlPlane } = run(aControlPlane(), [[absent], [at("ready")], [at("ready"), published]]);
    const moved = { ...at("ready"), endpoint: "https://10.0.0.8:6443" } as ClusterObservation;
    const result = stepEngineControlPlane(input(controlPlane, moved, { publication: published }));
    expect(result.desired.spec).toBeUndefined();
    expect(conditionOf({ status: result.desired.status }, "Available")).toMatchObject({
      status: "False",
      reason: "EndpointMoved",
    });
    expect(result.desired.status?.initialization?.controlPlaneInitialized).toBe(true);
  });
});

describe("versions of a running EngineControlPlane", () => {
  const running = () =>
    run(aControlPlane({ version: "1.33.3" }), [[absent], [at("ready")], [at("ready"), published]])
      .controlPlane;
  const withVersion = (controlPlane: EngineControlPlane, version: string): EngineControlPlane => ({
    ...controlPlane,
    metadata: { ...controlPlane.metadata, generation: 2 },
    spec: { ...controlPlane.spec, version },
  });
  const newer = "1.34.1";
  const base = aProfile();
  /** Our profile, offering a newer version besides. */
  const profile = {
    ...base,
    spec: { ...base.spec, supportedVersions: [{ version: newer }, ...base.spec.supportedVersions] },
  };

  it("upgrades through the backend's update when spec.version rises, available all along, RollingOut True", () => {
    const raised = withVersion(running(), `v${newer}`);
    const ordered = stepEngineControlPlane(input(raised, at("ready"), { publication: published, profile }));
    expect(ordered.state).toBe("running.updating");
    expect(ordered.commands).toEqual([{ kind: "update", version: newer }]);
    const updating = applied(raised, ordered);
    const during = stepEngineControlPlane(
      input(updating, at("updating"), { publication: published, profile }),
    );
    expect(conditionOf({ status: during.desired.status }, "Available")).toMatchObject({ status: "True" });
    expect(conditionOf({ status: during.desired.status }, "RollingOut")).toMatchObject({ status: "True" });
    expect(conditionOf({ status: during.desired.status }, "UpToDate")).toMatchObject({ reason: "Updating" });
    const done = stepEngineControlPlane(
      input(applied(updating, during), at("ready", newer), { publication: published, profile }),
    );
    expect(done.state).toBe("running.ready");
    expect(done.desired.status).toMatchObject({ version: `v${newer}`, versions: [{ version: `v${newer}` }] });
  });

  it("orders an update that did not take again, and publishes credentials that rotated meanwhile with it", () => {
    const raised = withVersion(running(), `v${newer}`);
    const updating = applied(
      raised,
      stepEngineControlPlane(input(raised, at("ready"), { publication: published, profile })),
    );
    const stale = { kubeconfig: "stale", endpointCurrent: true } as const;
    const again = stepEngineControlPlane(input(updating, at("ready"), { publication: stale, profile }));
    expect(again.state).toBe("running.updating");
    expect(again.commands).toEqual([
      expect.objectContaining({ kind: "publish", kubeconfig: true }),
      { kind: "update", version: newer },
    ]);
    const current = stepEngineControlPlane(input(updating, at("ready"), { publication: published, profile }));
    expect(current.commands).toEqual([{ kind: "update", version: newer }]);
  });

  it("refuses a downgrade with UpToDate False DowngradeNotAllowed, stays Available, orders nothing", () => {
    const lowered = withVersion(running(), "1.32");
    const result = stepEngineControlPlane(input(lowered, at("ready"), { publication: published }));
    expect(result.state).toBe("running.refused");
    expect(result.commands).toEqual([]);
    expect(conditionOf({ status: result.desired.status }, "UpToDate")).toMatchObject({
      status: "False",
      reason: "DowngradeNotAllowed",
    });
    expect(conditionOf({ status: result.desired.status }, "Available")).toMatchObject({ status: "True" });
    expect(conditionOf({ status: result.desired.status }, "Ready")).toMatchObject({
      status: "False",
      reason: "DowngradeNotAllowed",
    });
    expect(result.events).toContainEqual(
      expect.objectContaining({ type: "Warning", reason: "DowngradeNotAllowed" }),
    );
    const back = stepEngineControlPlane(
      input(applied(lowered, result), at("ready"), { publication: published }),
    );
    expect(back.state).toBe("running.refused");
    const fixed = stepEngineControlPlane(
      input(withVersion(applied(lowered, result), "1.33"), at("ready"), { publication: published }),
    );
    expect(fixed.state).toBe("running.ready");
  });
});

describe("pausing, ignoring and deleting", () => {
  it("a paused control plane (its annotation or its Cluster) gets only the Paused condition, nothing else", () => {
    for (const [controlPlane, owner, why] of [
      [aControlPlane({ annotations: { "cluster.x-k8s.io/paused": "" } }), aCapiCluster(), "annotation"],
      [aControlPlane(), aCapiCluster({ paused: true }), "spec.paused"],
    ] as const) {
      expect(engineControlPlaneResponsibility(controlPlane, aProfile(), CLAIMANT, owner)).toBe("paused");
      const reason = controlPlanePausedBy(controlPlane, owner) ?? "";
      expect(reason).toContain(why);
      const result = stepPausedEngineControlPlane({ controlPlane, why: reason, now: NOW });
      expect(result.commands).toEqual([]);
      expect(result.state).toBe("pending");
      expect(result.desired.metadata).toBe(controlPlane.metadata);
      expect(result.desired.status?.conditions).toEqual([
        expect.objectContaining({ type: "Paused", status: "True", message: expect.stringContaining(why) }),
      ]);
    }
  });

  it("an ignored or foreign control plane is not this engine's to step", () => {
    const ignored = aControlPlane({ annotations: { "openmcp.cloud/operation": "ignore" } });
    expect(engineControlPlaneResponsibility(ignored, aProfile(), CLAIMANT, aCapiCluster())).toBe("ignored");
    expect(
      engineControlPlaneResponsibility(aControlPlane(), aProfile("someone-else"), CLAIMANT, aCapiCluster()),
    ).toBe("foreign");
    expect(engineControlPlaneResponsibility(aControlPlane(), aProfile(), CLAIMANT, aCapiCluster())).toBe(
      "ours",
    );
  });

  it("deleted through its Cluster: unpublishes and deletes at the backend, and lets go only once the backend is empty", () => {
    const { controlPlane } = run(aControlPlane(), [[absent], [at("ready")], [at("ready"), published]]);
    const deleted = { ...controlPlane, metadata: { ...controlPlane.metadata, deletionTimestamp: NOW } };
    const ordering = stepEngineControlPlane(input(deleted, at("ready"), { publication: published }));
    expect(ordering.state).toBe("deleting.releasing");
    expect(ordering.commands).toEqual([{ kind: "unpublish", capiCluster: "workload" }, { kind: "delete" }]);
    expect(ordering.desired.metadata.finalizers).toEqual([ENGINE_CONTROL_PLANE_FINALIZER]);
    const waiting = stepEngineControlPlane(input(applied(deleted, ordering), at("deleting")));
    expect(waiting.desired.metadata.finalizers).toEqual([ENGINE_CONTROL_PLANE_FINALIZER]);
    const gone = stepEngineControlPlane(input(applied(deleted, waiting), absent));
    expect(gone.state).toBe("deleting.released");
    expect(gone.desired.metadata.finalizers).toEqual([]);
  });

  it("adopts what the backend holds after a restart mid-provisioning: no second create", () => {
    const ordered = run(aControlPlane(), [[absent]]).controlPlane;
    const restarted = stepEngineControlPlane(input(ordered, at("provisioning")));
    expect(restarted.commands).toEqual([]);
    expect(restarted.state).toBe("provisioning");
  });
});
