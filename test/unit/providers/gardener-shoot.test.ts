/** A Cluster as a Shoot: its name, the desired Shoot, the smallest change, and what a Shoot's status means. */
import { describe, expect, it } from "vitest";
import { poolMemberTarget } from "../../../src/api/cluster-pool.ts";
import { gardenerSettings } from "../../../src/providers/gardener-settings.ts";
import {
  desiredShoot,
  GARDENER_KEYS,
  hibernationImpossible,
  memberShootName,
  type Shoot,
  shootChanges,
  shootConditions,
  shootName,
  shootObservation,
  shootPoolMember,
  shootServes,
} from "../../../src/providers/gardener-shoot.ts";
import { aClusterTarget, TENANT_METADATA } from "../../support/builders.ts";
import { localGardenerSettings } from "../../support/gardener-settings.ts";

const target = aClusterTarget({ providerConfig: "gardener", ...TENANT_METADATA });
const settings = localGardenerSettings({ metadata: { labels: { team: "platform" } } });

describe("shootName", () => {
  it("is short, stable and differs per Cluster; a label overrides it", () => {
    const name = shootName(target);
    expect(name).toMatch(/^o[a-z2-7]{8}$/);
    expect(shootName({ ...target, uid: "other" })).toBe(name); // from namespace/name, not the uid
    expect(shootName({ ...target, name: "prod" })).not.toBe(name);
    expect(shootName({ ...target, labels: { [GARDENER_KEYS.shootNameLabel]: "mine" } })).toBe("mine");
  });
});

describe("desiredShoot and shootChanges", () => {
  const desired = desiredShoot(target, settings, "garden-dev", "1.33.2");
  const stored: Shoot = {
    metadata: {
      ...desired.metadata,
      resourceVersion: "7",
      labels: { ...desired.metadata.labels, "gardener.cloud/x": "y" },
    },
    spec: {
      ...desired.spec,
      provider: { type: "local", infrastructureConfig: { defaulted: true } },
      kubernetes: { version: "1.33.2", kubeAPIServer: { defaulted: true } },
    },
  };

  it("merges the template, the version, openMCP's metadata and who the Shoot is for", () => {
    expect(desired.metadata).toEqual({
      name: shootName(target),
      namespace: "garden-dev",
      labels: { team: "platform", "metadata.open-control-plane.io/tenant": "acme" },
      annotations: {
        "metadata.open-control-plane.io/owner": "bob",
        [GARDENER_KEYS.clusterAnnotation]: "team-a/dev",
        [GARDENER_KEYS.clusterUidAnnotation]: "u-1",
      },
    });
    expect(desired.spec).toEqual({
      cloudProfile: { name: "local" },
      region: "local",
      provider: { type: "local" },
      kubernetes: { version: "1.33.2" },
    });
  });

  it("finds nothing to change when only Gardener's defaults and foreign labels differ", () => {
    expect(shootChanges(stored, desired)).toBeUndefined();
  });

  it("changes only the version for an upgrade, and removes a copied label the Cluster no longer has", () => {
    const upgraded = desiredShoot({ ...target, labels: {} }, settings, "garden-dev", "1.34.0");
    expect(shootChanges(stored, upgraded)).toEqual({
      metadata: { labels: { "metadata.open-control-plane.io/tenant": null } },
      spec: { kubernetes: { version: "1.34.0" } },
    });
  });

  it("copies the openMCP project and workspace labels (not such annotations), and removes them when the Cluster drops them", () => {
    const tenant = {
      ...target,
      labels: { ...target.labels, "openmcp.cloud/project": "acme", "openmcp.cloud/workspace": "dev-ws" },
      annotations: { ...target.annotations, "openmcp.cloud/project": "not-copied" },
    };
    const withLabels = desiredShoot(tenant, settings, "garden-dev", "1.33.2");
    expect(withLabels.metadata.labels).toEqual({
      team: "platform",
      "metadata.open-control-plane.io/tenant": "acme",
      "openmcp.cloud/project": "acme",
      "openmcp.cloud/workspace": "dev-ws",
    });
    expect(withLabels.metadata.annotations?.["openmcp.cloud/project"]).toBeUndefined();
    expect(shootChanges(stored, withLabels)).toEqual({
      metadata: { labels: { "openmcp.cloud/project": "acme", "openmcp.cloud/workspace": "dev-ws" } },
    });
    const carrying: Shoot = {
      ...stored,
      metadata: { ...stored.metadata, labels: withLabels.metadata.labels },
    };
    expect(shootChanges(carrying, desired)).toEqual({
      metadata: { labels: { "openmcp.cloud/project": null, "openmcp.cloud/workspace": null } },
    });
  });

  it("refuses a downgrade, naming both versions", () => {
    expect(() => shootChanges(stored, desiredShoot(target, settings, "garden-dev", "1.32.9"))).toThrow(
      /runs Kubernetes 1.33.2; Gardener does not downgrade to 1.32.9/,
    );
  });
});

describe("a warm pool member's Shoot", () => {
  const member = { id: "pool-0a1b2c3d4e5f", pool: "warm", version: "1.33.2" };
  const idle = desiredShoot(poolMemberTarget(member.id), settings, "garden-dev", "1.33.2", member);
  const bound = desiredShoot(target, settings, "garden-dev", "1.33.2", member);

  it("is named and owned by the member's id alone, and carries the pool's facts", () => {
    expect(idle.metadata.name).toBe(memberShootName(member.id));
    expect(memberShootName(member.id)).toMatch(/^o[a-z2-7]{8}$/);
    expect(idle.metadata.annotations).toMatchObject({
      [GARDENER_KEYS.clusterUidAnnotation]: member.id,
      [GARDENER_KEYS.poolMemberAnnotation]: `warm/${member.id}`,
      [GARDENER_KEYS.poolVersionAnnotation]: "1.33.2",
    });
    expect(idle.metadata.annotations?.[GARDENER_KEYS.boundToAnnotation]).toBeUndefined();
    expect(shootPoolMember(idle)).toEqual(member);
    expect(shootServes(idle, { ...target, uid: member.id })).toBe(true);
    expect(shootServes(idle, target)).toBe(false);
  });

  it("keeps its name and id once bound, names the Cluster it serves, and takes the Cluster's metadata", () => {
    expect(bound.metadata.name).toBe(idle.metadata.name);
    expect(bound.metadata.annotations).toMatchObject({
      [GARDENER_KEYS.clusterUidAnnotation]: member.id,
      [GARDENER_KEYS.boundToAnnotation]: target.uid,
      [GARDENER_KEYS.clusterAnnotation]: "team-a/dev",
      "metadata.open-control-plane.io/owner": "bob",
    });
    expect(bound.metadata.labels).toMatchObject({ "metadata.open-control-plane.io/tenant": "acme" });
    expect(shootPoolMember(bound)).toEqual({ ...member, boundTo: target.uid });
    expect(shootServes(bound, target)).toBe(true);
    expect(shootServes(bound, { ...target, uid: member.id })).toBe(true);
    // Bound by bind (two annotations), the Shoot differs from what the Cluster wants only in the Cluster's metadata.
    const boundByBind: Shoot = {
      ...idle,
      metadata: {
        ...idle.metadata,
        annotations: {
          ...idle.metadata.annotations,
          [GARDENER_KEYS.boundToAnnotation]: target.uid,
          [GARDENER_KEYS.clusterAnnotation]: "team-a/dev",
        },
      },
    };
    expect(shootChanges(boundByBind, bound)).toEqual({
      metadata: {
        labels: { "metadata.open-control-plane.io/tenant": "acme" },
        annotations: { "metadata.open-control-plane.io/owner": "bob" },
      },
    });
  });

  it("is no member when its pool annotation names another id than it was made for, or none", () => {
    const own = desiredShoot(target, settings, "garden-dev", "1.33.2");
    expect(shootPoolMember(own)).toBeUndefined();
    const forged: Shoot = {
      ...own,
      metadata: {
        ...own.metadata,
        annotations: { ...own.metadata.annotations, [GARDENER_KEYS.poolMemberAnnotation]: "warm/pool-other" },
      },
    };
    expect(shootPoolMember(forged)).toBeUndefined();
  });
});

describe("shootObservation", () => {
  const base: Shoot = {
    metadata: { name: "s", namespace: "garden-dev", generation: 2 },
    spec: { kubernetes: { version: "1.33.2" } },
  };
  const up = {
    observedGeneration: 2,
    lastOperation: { type: "Create", state: "Succeeded", progress: 100 },
    conditions: [{ type: "APIServerAvailable", status: "True" }],
    advertisedAddresses: [
      { name: "internal", url: "https://in" },
      { name: "external", url: "https://ex" },
    ],
  };

  it("is provisioning until gardenlet reports, and ready with the external address once the API server is up", () => {
    expect(shootObservation(base)).toMatchObject({
      phase: "provisioning",
      info: "Shoot garden-dev/s: waiting for gardenlet",
    });
    expect(shootObservation({ ...base, status: up })).toEqual({
      exists: true,
      phase: "ready",
      version: "1.33.2",
      endpoint: "https://ex",
      info: "Shoot garden-dev/s: Create Succeeded (100%)",
      conditions: [
        { type: "ShootAPIServerAvailable", status: "True", reason: "ReportedByGardener", message: "" },
        {
          type: "ShootLastOperation",
          status: "True",
          reason: "CreateSucceeded",
          message: "Create Succeeded (100%)",
        },
      ],
    });
  });

  it("is updating while Gardener has not caught up with the spec, and names unhealthy conditions", () => {
    const behind = {
      ...up,
      observedGeneration: 1,
      conditions: [
        ...up.conditions,
        { type: "ControlPlaneHealthy", status: "False", reason: "Down", message: "etcd down" },
      ],
    };
    expect(shootObservation({ ...base, status: behind })).toMatchObject({
      phase: "updating",
      endpoint: "https://ex",
      message: "ControlPlaneHealthy=False (Down): etcd down",
    });
  });

  it("is failed with Gardener's description and last errors when an operation failed, and deleting once deletion began", () => {
    const failed = {
      ...up,
      lastOperation: { type: "Create", state: "Failed", description: "quota" },
      lastErrors: [{ description: "no capacity" }],
    };
    expect(shootObservation({ ...base, status: failed })).toMatchObject({
      phase: "failed",
      message: "Gardener: Create failed: quota; no capacity",
    });
    expect(
      shootObservation({ ...base, metadata: { ...base.metadata, deletionTimestamp: "t" }, status: up }).phase,
    ).toBe("deleting");
  });
});

describe("a Shoot's hibernation (contract 1.6)", () => {
  const base: Shoot = {
    metadata: { name: "s", namespace: "garden-dev", generation: 3 },
    spec: { kubernetes: { version: "1.33.2" } },
  };
  const awake = {
    observedGeneration: 3,
    lastOperation: { type: "Reconcile", state: "Succeeded", progress: 100 },
    conditions: [{ type: "APIServerAvailable", status: "True" }],
    advertisedAddresses: [{ name: "external", url: "https://ex" }],
  };
  const asleep = {
    ...awake,
    hibernated: true,
    conditions: [{ type: "APIServerAvailable", status: "True", reason: "ConditionNotChecked" }],
  };
  const spec = (enabled: boolean) => ({ ...base.spec, hibernation: { enabled } });

  it("is hibernating once the spec asks, hibernated once gardenlet says so, waking until it says awake; the endpoint stays", () => {
    const processing = {
      ...awake,
      observedGeneration: 2,
      lastOperation: { type: "Reconcile", state: "Processing" },
    };
    expect(shootObservation({ ...base, spec: spec(true), status: processing })).toMatchObject({
      phase: "hibernating",
      endpoint: "https://ex",
    });
    expect(shootObservation({ ...base, spec: spec(true), status: asleep })).toMatchObject({
      phase: "hibernated",
      endpoint: "https://ex",
    });
    expect(shootObservation({ ...base, spec: spec(false), status: asleep })).toMatchObject({
      phase: "waking",
      endpoint: "https://ex",
    });
    expect(shootObservation({ ...base, spec: spec(false), status: awake })).toMatchObject({
      phase: "ready",
      endpoint: "https://ex",
    });
  });

  it("is failed when the hibernating reconcile failed, and deleting while deleted asleep", () => {
    const failed = { ...awake, lastOperation: { type: "Reconcile", state: "Failed", description: "stuck" } };
    expect(shootObservation({ ...base, spec: spec(true), status: failed }).phase).toBe("failed");
    const deleted = { ...base, metadata: { ...base.metadata, deletionTimestamp: "t" }, spec: spec(true) };
    expect(shootObservation({ ...deleted, status: asleep }).phase).toBe("deleting");
  });

  it("says why Gardener's HibernationPossible constraint forbids it", () => {
    expect(hibernationImpossible({ ...base, status: awake })).toBeUndefined();
    const constraints = [
      { type: "HibernationPossible", status: "False", reason: "ProblematicWebhooks", message: "webhook x" },
    ];
    expect(hibernationImpossible({ ...base, status: { ...awake, constraints } })).toBe(
      "Gardener: the Shoot cannot be hibernated (ProblematicWebhooks): webhook x",
    );
  });

  it("leaves spec.hibernation.enabled to hibernate and wake; a template's schedules are kept in line", () => {
    const sleepy = localGardenerSettings({ spec: { hibernation: { enabled: false } } });
    const desired = desiredShoot(target, sleepy, "garden-dev", "1.33.2");
    const stored: Shoot = { ...desired, spec: { ...desired.spec, hibernation: { enabled: true } } };
    expect(shootChanges(stored, desired)).toBeUndefined();
    const schedules = [{ start: "0 20 * * *" }];
    const scheduled = localGardenerSettings({ spec: { hibernation: { schedules } } });
    expect(shootChanges(stored, desiredShoot(target, scheduled, "garden-dev", "1.33.2"))).toEqual({
      spec: { hibernation: { schedules } },
    });
  });
});

describe("shootConditions", () => {
  it("mirrors each Shoot condition with a Shoot prefix, Progressing as Unknown, reasons made valid", () => {
    expect(
      shootConditions({
        conditions: [
          {
            type: "ControlPlaneHealthy",
            status: "Progressing",
            reason: "Deployment-Unhealthy",
            message: "kube-apiserver rolling",
          },
          { type: "EveryNodeReady", status: "False", reason: "1NodeNotReady" },
        ],
      }),
    ).toEqual([
      {
        type: "ShootControlPlaneHealthy",
        status: "Unknown",
        reason: "DeploymentUnhealthy",
        message: "kube-apiserver rolling",
      },
      { type: "ShootEveryNodeReady", status: "False", reason: "NodeNotReady", message: "" },
    ]);
  });

  it("says the last operation: False while creating or after an error (with Gardener's last errors), True for a routine reconcile", () => {
    const [creating] = shootConditions({
      lastOperation: { type: "Create", state: "Processing", progress: 40, description: "Waiting for DNS" },
    });
    expect(creating).toEqual({
      type: "ShootLastOperation",
      status: "False",
      reason: "CreateProcessing",
      message: "Create Processing (40%): Waiting for DNS",
    });
    const [error] = shootConditions({
      lastOperation: { type: "Reconcile", state: "Error", description: "retrying" },
      lastErrors: [{ description: "infrastructure quota exceeded" }],
    });
    expect(error).toMatchObject({
      status: "False",
      reason: "ReconcileError",
      message: "Reconcile Error: retrying; infrastructure quota exceeded",
    });
    const [routine] = shootConditions({
      lastOperation: { type: "Reconcile", state: "Processing", progress: 80 },
    });
    expect(routine).toMatchObject({ status: "True", reason: "ReconcileProcessing" });
  });
});

describe("gardenerSettings", () => {
  it("names the ProviderConfig and the field when settings are wrong", () => {
    expect(() => gardenerSettings({ kubeconfigSecretRef: { namespace: "n", name: "g" } }, "pc")).toThrow(
      /ProviderConfig pc: settings.project must name a Gardener project/,
    );
    expect(() =>
      gardenerSettings(
        { kubeconfigSecretRef: { namespace: "n", name: "g" }, project: "dev", shootTemplate: { spec: {} } },
        "pc",
      ),
    ).toThrow(/ProviderConfig pc: settings.shootTemplate.spec.cloudProfile.name must name the CloudProfile/);
    expect(() => gardenerSettings({ project: "dev" }, "pc")).toThrow(
      /ProviderConfig pc has no settings.kubeconfigSecretRef/,
    );
  });
});

describe("a Shoot openMCP's Gardener provider made", () => {
  const theirs = (labels: Record<string, string>, annotations: Record<string, string> = {}): Shoot => ({
    ...desiredShoot(target, settings, "garden-dev", "1.33.2"),
    metadata: { name: "their-shoot", namespace: "garden-dev", labels, annotations },
  });

  it("serves the Cluster its labels name, in either of that provider's label spellings, while no Cluster uid marks it", () => {
    const current = {
      "gardener.clusters.openmcp.cloud/cluster-name": target.name,
      "gardener.clusters.openmcp.cloud/cluster-namespace": target.namespace,
    };
    const older = {
      "cluster-name.gardener.clusters.openmcp.cloud": target.name,
      "cluster-namespace.gardener.clusters.openmcp.cloud": target.namespace,
    };
    expect(shootServes(theirs(current), target)).toBe(true);
    expect(shootServes(theirs(older), target)).toBe(true);
    // Another Cluster's name or namespace, or a Shoot the engine marked for another uid: not this Cluster's.
    expect(
      shootServes(theirs({ ...current, "gardener.clusters.openmcp.cloud/cluster-name": "other" }), target),
    ).toBe(false);
    expect(
      shootServes(
        theirs({ ...current, "gardener.clusters.openmcp.cloud/cluster-namespace": "elsewhere" }),
        target,
      ),
    ).toBe(false);
    expect(
      shootServes(theirs(current, { [GARDENER_KEYS.clusterUidAnnotation]: "another-uid" }), target),
    ).toBe(false);
    expect(shootServes(theirs({}), target)).toBe(false);
  });
});
