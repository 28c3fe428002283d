/**
 * The `gardener` backend matching openMCP's Gardener provider, against Gardener's own API server (no gardenlet: the
 * Shoots are only ordered): a rotated garden kubeconfig Secret taken up on the next call, a Cluster's ClusterConfigs
 * (read from a real API server with our CRD, as the runtime passes them) applied to its Shoot, and the openMCP
 * project and workspace labels copied.
 */
import { randomUUID } from "node:crypto";
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget, ResolvedClusterConfig } from "../../src/api/backend.ts";
import type { JsonObject } from "../../src/api/common.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { isNotFound } from "../../src/api/error-message.ts";
import { CORE, workerlessShootSpec } from "../../src/dev/gardener-garden-objects.ts";
import { GARDENER_KEYS, shootName } from "../../src/providers/gardener-shoot.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type GardenerBackendWorld, startGardenerBackendWorld } from "../support/gardener-backend-world.ts";
import { readCustomObject, writeSecret } from "../support/maybe-absent.ts";

const NS = "gardener-parity";
const VERSION = "1.34.2";
let world: GardenerBackendWorld;
let gardenCore: CoreV1Api;

/** A target as the runtime makes it from a Cluster in {@link NS}, on ProviderConfig `dev`. */
function targetFor(name: string, extra: Partial<ClusterTarget> = {}): ClusterTarget {
  return {
    uid: randomUUID(),
    namespace: NS,
    name,
    tenancy: "Exclusive",
    profile: "test.gardener-parity.dev",
    providerConfig: "dev",
    settings: {
      kubeconfigSecretRef: { namespace: NS, name: "garden" },
      project: "par",
      shootTemplate: { spec: workerlessShootSpec("local") },
    },
    ...extra,
  };
}

const readShoot = (target: ClusterTarget) => world.readShoot(shootName(target));

/** Reads the ClusterConfigs named, in order, from the management cluster: what the runtime passes on `target.clusterConfigs`. */
async function resolved(...names: string[]): Promise<ResolvedClusterConfig[]> {
  return Promise.all(
    names.map(async (name): Promise<ResolvedClusterConfig> => {
      const object = await readCustomObject<{ spec?: JsonObject }>(
        world.custom,
        RESOURCES.ClusterConfig,
        NS,
        name,
      );
      return object ? { name, found: true, spec: object.spec ?? {} } : { name, found: false };
    }),
  );
}

async function writeClusterConfig(name: string, spec: JsonObject): Promise<void> {
  const body = {
    apiVersion: "gardener.clusters.openmcp.cloud/v1alpha1",
    kind: "ClusterConfig",
    metadata: { name },
    spec,
  };
  try {
    const stored = (await world.custom.getNamespacedCustomObject({
      ...RESOURCES.ClusterConfig,
      namespace: NS,
      name,
    })) as { metadata: { resourceVersion: string } };
    await world.custom.replaceNamespacedCustomObject({
      ...RESOURCES.ClusterConfig,
      namespace: NS,
      name,
      body: { ...body, metadata: { name, resourceVersion: stored.metadata.resourceVersion } },
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await world.custom.createNamespacedCustomObject({ ...RESOURCES.ClusterConfig, namespace: NS, body });
  }
}

/** A kubeconfig for the garden that authenticates as ServiceAccount `default/<name>` with a fresh token. */
async function serviceAccountKubeconfig(name: string): Promise<string> {
  const token = await gardenCore.createNamespacedServiceAccountToken({
    namespace: "default",
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = world.garden.kubeConfig.getCurrentCluster();
  if (!cluster || !token.status?.token) throw new Error("no garden cluster or no token issued");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ ...cluster, name: "garden" }],
    users: [{ name, token: token.status.token }],
    contexts: [{ name: "garden", cluster: "garden", user: name }],
    currentContext: "garden",
  });
  return kubeConfig.exportConfig();
}

/** A ServiceAccount in the garden bound to cluster-admin, as a garden's robot account for the engine would be. */
async function gardenRobot(name: string): Promise<void> {
  await gardenCore.createNamespacedServiceAccount({ namespace: "default", body: { metadata: { name } } });
  await world.garden.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `engine-${name}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name, namespace: "default" }],
    },
  });
}

const writeGardenSecret = (kubeconfig: string): Promise<void> =>
  writeSecret(world.management.kubeConfig.makeApiClient(CoreV1Api), NS, "garden", { kubeconfig });

const messageOf = (observation: ClusterObservation) => (observation.exists ? observation.message : undefined);
const conditionOf = (observation: ClusterObservation, type: string) =>
  observation.exists ? observation.conditions?.find((c) => c.type === type) : undefined;
const outOfDate = (observation: ClusterObservation) => observation.exists && observation.outOfDate === true;

/** Observes `target`: not out of date, and its ShootClusterConfigs condition is exactly `expected`. */
async function expectClusterConfigsCondition(
  target: ClusterTarget,
  expected: { status: string; reason: string; message: string },
): Promise<void> {
  const observed = await world.backend.observe(target);
  expect(outOfDate(observed)).toBe(false);
  expect(conditionOf(observed, "ShootClusterConfigs")).toEqual({ type: "ShootClusterConfigs", ...expected });
}

beforeAll(async () => {
  world = await startGardenerBackendWorld({
    namespace: NS,
    project: "par",
    versions: [{ version: VERSION, classification: "supported" }],
  });
  gardenCore = world.garden.kubeConfig.makeApiClient(CoreV1Api);
  await gardenRobot("robot-a");
  await writeGardenSecret(await serviceAccountKubeconfig("robot-a"));
}, 3_600_000);

afterAll(async () => {
  await world?.stop();
}, 120_000);

describe("the gardener backend, as openMCP's Gardener provider behaves", { timeout: 300_000 }, () => {
  it("takes up a rotated garden kubeconfig Secret on its next call, and keeps nothing of a revoked one", async () => {
    const first = targetFor("rotate-1");
    await world.backend.create(first, VERSION);
    const before = await world.backend.observe(first);
    expect(before).toMatchObject({
      exists: true,
      info: `Shoot ${world.projectNamespace}/${shootName(first)}: waiting for gardenlet`,
    });
    expect(messageOf(before)).toBeUndefined();

    // The old credential is revoked: its ServiceAccount goes, so its token no longer authenticates.
    await gardenCore.deleteNamespacedServiceAccount({ namespace: "default", name: "robot-a" });
    const refused = await eventually(
      async () =>
        satisfying(await world.backend.observe(first), (o) =>
          (messageOf(o) ?? "").includes("401 Unauthorized"),
        ),
      { what: "observe refused with the revoked token", timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(messageOf(refused)).toBe(
      `the garden at ${world.garden.kubeConfig.getCurrentCluster()?.server} refused the credential of the kubeconfig in Secret ${NS}/garden while reading Shoot ${world.projectNamespace}/${shootName(first)} (401 Unauthorized): it was revoked or has expired; put a valid kubeconfig into the Secret, the next call reads it`,
    );
    const second = targetFor("rotate-2");
    await expect(world.backend.create(second, VERSION)).rejects.toThrow(/401 Unauthorized/);
    expect(await readShoot(second)).toBeUndefined();

    // Rotation: the Secret now holds another robot's token. The very next calls use it, with no restart.
    await gardenRobot("robot-b");
    await writeGardenSecret(await serviceAccountKubeconfig("robot-b"));
    const after = await world.backend.observe(first);
    expect(messageOf(after)).toBeUndefined();
    expect(after).toMatchObject({ exists: true, phase: "provisioning" });
    await world.backend.create(second, VERSION);
    const made = await readShoot(second);
    expect(made?.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation]).toBe(second.uid);
    expect(made?.metadata.annotations?.["gardener.cloud/created-by"]).toBe(
      "system:serviceaccount:default:robot-b",
    );
    expect(world.logLines.join("\n")).not.toContain("eyJ"); // no token in the log
  });

  it("applies a Cluster's ClusterConfigs to its Shoot: extensions by type, resources by name, patches last", async () => {
    // What Gardener's admission checks: extension types must be registered, referenced objects must exist.
    await world.gardenApi.createClusterCustomObject({
      ...CORE,
      plural: "controllerregistrations",
      body: {
        apiVersion: "core.gardener.cloud/v1beta1",
        kind: "ControllerRegistration",
        metadata: { name: "test-extensions" },
        spec: {
          resources: [
            { kind: "Extension", type: "shoot-oidc-service", workerlessSupported: true },
            { kind: "Extension", type: "shoot-dns-service", workerlessSupported: true },
          ],
        },
      },
    });
    await gardenCore.createNamespacedConfigMap({
      namespace: world.projectNamespace,
      body: { metadata: { name: "ca-bundle" }, data: { "ca.crt": "not a real CA" } },
    });
    await writeClusterConfig("oidc", {
      extensions: [{ type: "shoot-oidc-service", providerConfig: { issuer: "https://issuer.example" } }],
      resources: [{ name: "ca", resourceRef: { apiVersion: "v1", kind: "ConfigMap", name: "ca-bundle" } }],
    });
    await writeClusterConfig("tweaks", {
      extensions: [{ type: "shoot-dns-service" }],
      patches: [
        { op: "add", path: "/spec/purpose", value: "evaluation" },
        { op: "add", path: "/metadata/annotations/example.com~1note", value: "from a ClusterConfig" },
        { op: "add", path: "/spec/extensions/0/disabled", value: true },
      ],
    });
    const target = { ...targetFor("configured"), clusterConfigs: await resolved("oidc", "tweaks") };
    await world.backend.create(target, VERSION);
    const shoot = await readShoot(target);
    expect(shoot?.spec.extensions).toEqual([
      { type: "shoot-oidc-service", providerConfig: { issuer: "https://issuer.example" }, disabled: true },
      { type: "shoot-dns-service" },
    ]);
    expect(shoot?.spec.resources).toEqual([
      { name: "ca", resourceRef: { apiVersion: "v1", kind: "ConfigMap", name: "ca-bundle" } },
    ]);
    expect(shoot?.spec.purpose).toBe("evaluation");
    expect(shoot?.metadata.annotations?.["example.com/note"]).toBe("from a ClusterConfig");
    await expectClusterConfigsCondition(target, {
      status: "True",
      reason: "Applied",
      message: "ClusterConfigs oidc, tweaks apply to the Shoot",
    });

    // A ClusterConfig changes: the Cluster is out of date, and one update brings the Shoot in line.
    await writeClusterConfig("tweaks", {
      extensions: [{ type: "shoot-dns-service" }],
      patches: [{ op: "add", path: "/spec/purpose", value: "testing" }],
    });
    const changed = { ...target, clusterConfigs: await resolved("oidc", "tweaks") };
    expect(outOfDate(await world.backend.observe(changed))).toBe(true);
    const generation = shoot?.metadata.generation ?? 0;
    await world.backend.update(changed, VERSION);
    const updated = await readShoot(target);
    expect(updated?.spec.purpose).toBe("testing");
    expect(updated?.spec.extensions).toEqual([
      { type: "shoot-oidc-service", providerConfig: { issuer: "https://issuer.example" } },
      { type: "shoot-dns-service" },
    ]);
    expect(updated?.metadata.generation).toBe(generation + 1);
    expect(outOfDate(await world.backend.observe(changed))).toBe(false);

    // A patch that cannot apply: a condition naming the ClusterConfig, an update refused with it, the Shoot untouched.
    await writeClusterConfig("tweaks", {
      patches: [{ op: "test", path: "/spec/region", value: "mars" }],
    });
    const broken = { ...target, clusterConfigs: await resolved("oidc", "tweaks") };
    await expectClusterConfigsCondition(broken, {
      status: "False",
      reason: "InvalidClusterConfig",
      message: `ClusterConfig ${NS}/tweaks: spec.patches[0] (test /spec/region) cannot be applied to the Shoot: Test operation failed`,
    });
    await expect(world.backend.update(broken, VERSION)).rejects.toThrow(
      `ClusterConfig ${NS}/tweaks: spec.patches[0] (test /spec/region) cannot be applied to the Shoot`,
    );
    expect((await readShoot(target))?.metadata.resourceVersion).toBe(updated?.metadata.resourceVersion);
  });

  it("refuses to create a Shoot for a Cluster naming a ClusterConfig that does not exist, naming it", async () => {
    const target = { ...targetFor("unconfigured"), clusterConfigs: await resolved("oidc", "nope") };
    await expect(world.backend.create(target, VERSION)).rejects.toThrow(
      `ClusterConfig ${NS}/nope (spec.clusterConfigs of Cluster ${NS}/unconfigured) does not exist; create it or remove it from the list`,
    );
    expect(await readShoot(target)).toBeUndefined();
  });

  it("copies the openMCP project and workspace labels to the Shoot, and follows their changes", async () => {
    const labels = { "openmcp.cloud/project": "acme", "openmcp.cloud/workspace": "dev", other: "not copied" };
    const target = targetFor("labelled", { labels });
    await world.backend.create(target, VERSION);
    const shoot = await readShoot(target);
    expect(shoot?.metadata.labels).toMatchObject({
      "openmcp.cloud/project": "acme",
      "openmcp.cloud/workspace": "dev",
    });
    expect(shoot?.metadata.labels?.other).toBeUndefined();
    expect(outOfDate(await world.backend.observe(target))).toBe(false);

    const moved = {
      ...target,
      labels: { "openmcp.cloud/project": "acme", "openmcp.cloud/workspace": "prod" },
    };
    expect(outOfDate(await world.backend.observe(moved))).toBe(true);
    await world.backend.update(moved, VERSION);
    expect((await readShoot(target))?.metadata.labels?.["openmcp.cloud/workspace"]).toBe("prod");

    const dropped = { ...target, labels: {} };
    expect(outOfDate(await world.backend.observe(dropped))).toBe(true);
    await world.backend.update(dropped, VERSION);
    const bare = await readShoot(target);
    expect(bare?.metadata.labels?.["openmcp.cloud/project"]).toBeUndefined();
    expect(bare?.metadata.labels?.["openmcp.cloud/workspace"]).toBeUndefined();
    expect(outOfDate(await world.backend.observe(dropped))).toBe(false);
  });
});
