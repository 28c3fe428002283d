/** Explanations of Clusters as the pure step leaves them: each situation in words, kept in step with the step's conditions. */

import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../../src/api/backend.ts";
import type { Cluster } from "../../../../src/api/cluster.ts";
import { CLUSTER_FINALIZERS } from "../../../../src/api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../../../src/api/constants/cluster-pool.ts";
import { RESTORE_FROM_ANNOTATION } from "../../../../src/api/constants/cluster-snapshot.ts";
import { HIBERNATE_ANNOTATION } from "../../../../src/api/constants/hibernation.ts";
import { ANNOTATIONS } from "../../../../src/api/constants.ts";
import { HANDOVER_ANNOTATION } from "../../../../src/api/move.ts";
import { explainCluster, type ProfileLookup } from "../../../../src/machines/cluster/explain.ts";
import { unobservedStatus } from "../../../../src/machines/cluster/status.ts";
import {
  absent,
  aCluster,
  aProfile,
  input,
  provisioningAt,
  readyAt,
} from "../../../support/cluster-fixtures.ts";
import { afterWrites, stepClusterWrites } from "../../../support/step-writes.ts";

const ours: ProfileLookup = { found: true, profile: aProfile() };

/** The Cluster after steps against `observation` until nothing changes (as the API server would hold it). */
function settled(cluster: Cluster, observation: ClusterObservation, extra = {}): Cluster {
  let current = cluster;
  for (let i = 0; i < 5; i++) {
    const result = stepClusterWrites(input(current, observation, extra));
    if (result.metadataPatch.length === 0 && result.statusPatch.length === 0) break;
    current = afterWrites(current, result);
  }
  return current;
}

const deleting = (cluster: Cluster, finalizers: string[]): Cluster => ({
  ...cluster,
  metadata: { ...cluster.metadata, deletionTimestamp: "2026-11-21T11:00:00Z", finalizers },
});

describe("explainCluster", () => {
  it("names the namespaces a namespaced backend's tenant is admin of, as its observation reports them", () => {
    const tenantReady: ClusterObservation = {
      exists: true,
      phase: "ready",
      version: "1.33.3",
      endpoint: "https://127.0.0.1:6443",
      adminNamespaces: ["tenant-a"],
    };
    const cluster = settled(aCluster(), tenantReady);
    expect(cluster.status?.providerStatus).toEqual({ state: "ready", tenantNamespaces: ["tenant-a"] });
    // A later look whose observation does not say keeps what the status says.
    expect(settled(cluster, readyAt("1.33.3")).status?.providerStatus?.tenantNamespaces).toEqual([
      "tenant-a",
    ]);
    expect(explainCluster(cluster, ours).why).toContain(
      "its backend grants admin of namespace tenant-a only: its tenant works there (status.providerStatus.tenantNamespaces)",
    );
    expect(explainCluster(settled(aCluster(), readyAt("1.33.3")), ours).why.join(" ")).not.toContain(
      "tenantNamespaces",
    );
  });

  it("says a Cluster came from a warm pool, written by the step that bound it, Ready at once", () => {
    const cluster = settled(aCluster(), readyAt("1.33.3"), {
      poolMember: { pool: "warm", member: "pool-0a1b2c3d4e5f", claimed: true },
    });
    expect(cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]).toBe(
      "warm/pool-0a1b2c3d4e5f",
    );
    const explanation = explainCluster(cluster, ours);
    expect(explanation.state).toBe("ready");
    expect(explanation.why).toContain(
      "it came from warm pool warm: bound to pool cluster pool-0a1b2c3d4e5f, made before the Cluster asked",
    );
  });

  it("says a Cluster bound to a sleeping pool's member waits for its wake", () => {
    const asleep: ClusterObservation = { exists: true, phase: "hibernated", version: "1.33.3" };
    const cluster = settled(aCluster(), asleep, {
      poolMember: { pool: "sleepy", member: "pool-0a1b2c3d4e5f", claimed: true },
    });
    const explanation = explainCluster(cluster, ours);
    expect(explanation.state).toBe("waking");
    expect(explanation.why).toContain(
      "pool cluster pool-0a1b2c3d4e5f was asleep: it is woken for this Cluster, which is Ready once it serves",
    );
  });

  it("names the ClusterSnapshot a Cluster was made from (a clone)", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const clone = {
      ...ready,
      metadata: { ...ready.metadata, annotations: { [RESTORE_FROM_ANNOTATION]: "before-upgrade" } },
    };
    expect(explainCluster(clone, ours).why).toContain(
      "it was made from ClusterSnapshot before-upgrade (a clone: its data, CA and keys; its own endpoint)",
    );
    expect(explainCluster(ready, ours).why.join(" ")).not.toContain("ClusterSnapshot");
  });

  it("says what a moved Cluster's take-over and a pool claim wait for", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const moved = {
      ...ready,
      metadata: { ...ready.metadata, annotations: { [HANDOVER_ANNOTATION]: "my-cluster-handover" } },
    };
    // The import failed: the step that reports it leaves the Cluster taking over.
    const failedImport = stepClusterWrites(
      input(moved, absent, {
        handover: { secret: "my-cluster-handover", state: "ready" },
        lastError: "takeOver failed: backend unreachable",
      }),
    );
    const takingOver = explainCluster(afterWrites(moved, failedImport), ours);
    expect(takingOver.state).toBe("takingOver");
    expect(takingOver.why.join(" ")).toContain("hand-over Secret my-cluster-handover is not taken over yet");
    expect(takingOver.waitingFor.join(" ")).toContain("import the cluster's state");

    const claiming = stepClusterWrites(
      input(aCluster(), absent, { poolMember: { pool: "warm", member: "pool-1", claimed: false } }),
    );
    expect(claiming.commands).toEqual([{ kind: "claimPoolMember", pool: "warm", member: "pool-1" }]);
    const explained = explainCluster(afterWrites(aCluster(), claiming), ours);
    expect(explained.state).toBe("claimingPoolMember");
    expect(explained.why).toContain("claiming a cluster of warm pool warm");
  });

  it("says a Ready Cluster whose backend lost it, or cannot be asked, is not waiting for nothing", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const stopped = settled(ready, {
      exists: true,
      phase: "provisioning",
      version: "1.33.3",
      message: "its processes are not running",
    });
    expect(explainCluster(stopped, ours)).toEqual({
      state: "ready",
      phase: "Progressing",
      why: [
        "ClusterReady=False (BackendNotReady): the backend reports the cluster provisioning: its processes are not running",
      ],
      waitingFor: [
        "the backend to report the cluster ready again (looked at every retry period, 30 s by default), or to report it lost or failed",
      ],
    });
    const status = unobservedStatus(ready, "Secret clusters/host not found", "2026-11-21T10:05:00Z");
    const blind = { ...ready, ...(status ? { status } : {}) } as Cluster;
    expect(explainCluster(blind, ours)).toMatchObject({
      state: "ready",
      phase: "Progressing",
      why: [
        "ClusterReady=False (ObserveFailed): the backend could not be asked about the cluster: Secret clusters/host not found",
      ],
      waitingFor: [
        "the backend to answer again (the controller retries with backoff); until then nothing is ordered",
      ],
    });
  });

  it("says what a Cluster asleep waits for, and what a refused sleep needs", () => {
    const asked = (value: string) => ({
      ...aCluster(),
      metadata: { ...aCluster().metadata, annotations: { [HIBERNATE_ANNOTATION]: value } },
    });
    const asleep: ClusterObservation = {
      exists: true,
      phase: "hibernated",
      version: "1.33.3",
      endpoint: "https://127.0.0.1:6443",
    };
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const hibernated = settled({ ...ready, metadata: asked("true").metadata }, asleep, {
      hibernationOffered: true,
    });
    expect(hibernated.status?.providerStatus?.state).toBe("hibernated");
    const explained = explainCluster(hibernated, ours);
    expect(explained.why.join(" ")).toContain("asleep as asked");
    expect(explained.waitingFor.join(" ")).toContain(`Set annotation ${HIBERNATE_ANNOTATION} to "false"`);
    const refused = settled({ ...ready, metadata: asked("true").metadata }, readyAt("1.33.3"));
    expect(explainCluster(refused, ours).why.join(" ")).toContain(
      "Hibernation: the backend of profile test.engine-test.small cannot put clusters to sleep",
    );
  });

  it("says a provisioning Cluster waits for the backend, with what the backend reported", () => {
    const cluster = settled(aCluster(), provisioningAt("1.33.3"));
    expect(explainCluster(cluster, ours)).toEqual({
      state: "provisioning",
      phase: "Progressing",
      why: ["the backend reports provisioning"],
      waitingFor: ["the backend to report the cluster ready with an endpoint (the controller polls it)"],
    });
  });

  it("names the failed backend command while provisioning", () => {
    const cluster = settled(aCluster(), absent, { lastError: "create failed: quota exceeded" });
    expect(explainCluster(cluster, ours).why).toEqual([
      "the last backend command failed: create failed: quota exceeded",
    ]);
  });

  it("says a Ready Cluster waits for nothing, and warns of a deprecated version", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    expect(explainCluster(ready, ours)).toMatchObject({
      state: "ready",
      phase: "Ready",
      why: ["ClusterReady: Kubernetes 1.33.3 at https://127.0.0.1:6443"],
    });
    expect(explainCluster(ready, ours).waitingFor[0]).toMatch(/^nothing: it is Ready/);
    const deprecated = settled(aCluster({ version: "1.33.2" }), readyAt("1.33.2"));
    expect(explainCluster(deprecated, ours).why).toContain(
      "Kubernetes 1.33.2 is deprecated in profile test.engine-test.small; plan an upgrade",
    );
  });

  it("says what an update waits for: the wanted version, and what runs", () => {
    const ready = settled(aCluster({ version: "1.32" }), readyAt("1.32.7"));
    const asked = { ...ready, spec: { ...ready.spec, kubernetes: { version: "1.33" } } };
    const updating = settled(asked, readyAt("1.32.7"));
    expect(explainCluster(updating, ours)).toMatchObject({
      state: "updating",
      why: ["the spec asks for Kubernetes 1.33.3; the backend runs 1.32.7"],
      waitingFor: ["the backend to report ready on 1.33.3 (the controller polls it)"],
    });
  });

  it("tells a refused version and a downgrade apart, and lists what the profile offers", () => {
    const unsupported = explainCluster(settled(aCluster({ version: "1.20" }), absent), ours);
    expect(unsupported.state).toBe("failed");
    expect(unsupported.why[0]).toMatch(/^version not offered: Kubernetes 1\.20 is not offered/);
    expect(unsupported.waitingFor).toEqual([
      "a person: set spec.kubernetes.version to one the profile offers (1.33.3, 1.32.7), or delete the Cluster",
    ]);
    const downgrade = explainCluster(settled(aCluster({ version: "1.32" }), readyAt("1.33.3")), ours);
    expect(downgrade.why[0]).toMatch(/^downgrade refused: the cluster runs Kubernetes 1\.33\.3/);
  });

  it("says a failure at the backend needs a person there", () => {
    const failed = settled(aCluster(), {
      exists: true,
      phase: "failed",
      version: "1.33.3",
      message: "out of quota",
    });
    expect(explainCluster(failed, ours)).toMatchObject({
      state: "failed",
      why: ["the backend reports failed: out of quota"],
    });
    expect(explainCluster(failed, ours).waitingFor[0]).toMatch(/^a person to fix the cause at the backend/);
  });

  it("follows a deletion: blocked by others' finalizers, releasing at the backend", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const blocked = settled(
      deleting(ready, [CLUSTER_FINALIZERS.cluster, "example.com/keep"]),
      readyAt("1.33.3"),
    );
    expect(explainCluster(blocked, ours)).toMatchObject({
      state: "deleting.blocked",
      phase: "Terminating",
      why: ["waiting for finalizers: example.com/keep"],
    });
    const releasing = settled(deleting(ready, [CLUSTER_FINALIZERS.cluster]), {
      exists: true,
      phase: "deleting",
      version: "1.33.3",
    });
    expect(explainCluster(releasing, ours)).toMatchObject({
      state: "deleting.releasing",
      why: ["the backend is deleting the cluster (backend reports deleting)"],
      waitingFor: ["the backend to report the cluster gone; then our finalizer is removed"],
    });
  });

  it("explains Clusters no engine has interpreted: ignored, foreign, or without a profile", () => {
    const ignored: Cluster = {
      ...aCluster(),
      metadata: { ...aCluster().metadata, annotations: { [ANNOTATIONS.operation]: "ignore" } },
    };
    expect(explainCluster(ignored, ours).why[0]).toMatch(/^annotated openmcp\.cloud\/operation: ignore/);
    expect(explainCluster(aCluster(), { found: true, profile: aProfile("someone-else") })).toEqual({
      state: undefined,
      phase: undefined,
      why: [
        "no engine has written its status yet",
        'its ClusterProfile "test.engine-test.small" belongs to provider "someone-else"',
      ],
      waitingFor: ['the controller of provider "someone-else" (is it running?)'],
    });
    expect(explainCluster(aCluster(), { found: false }).why).toContain(
      'ClusterProfile "test.engine-test.small" does not exist',
    );
  });

  it("says when the status lags behind the spec", () => {
    const ready = settled(aCluster(), readyAt("1.33.3"));
    const edited = { ...ready, metadata: { ...ready.metadata, generation: 2 } };
    const explanation = explainCluster(edited, ours);
    expect(explanation.why[0]).toBe(
      "the status describes generation 1, the spec is at 2: the latest change is not reconciled yet",
    );
    expect(explanation.waitingFor[0]).toBe("the controller to reconcile the latest change (is it running?)");
  });
});
