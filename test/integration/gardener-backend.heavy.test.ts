/**
 * The `gardener` backend driven by the engine, against Gardener's own API server (gardener-apiserver aggregated
 * on a kube-apiserver) with a SIMULATED gardenlet making each Shoot's API server a real local control plane:
 * profile versions from the CloudProfile, Clusters as Shoots, admin access through Gardener's `adminkubeconfig`,
 * token access, upgrades and refused downgrades, Gardener's refusals as conditions, deletion with Gardener's
 * confirmation; a warm pool of Shoots serving a new Cluster.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { HIBERNATE_ANNOTATION } from "../../src/api/constants/hibernation.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { CORE, workerlessShootSpec } from "../../src/dev/gardener-garden-objects.ts";
import { SimulatedGardenlet } from "../../src/dev/gardener-simulated-gardenlet.ts";
import { type OidcIssuer, startOidcIssuer } from "../../src/dev/oidc-issuer.ts";
import { GARDENER_KEYS, memberShootName, type Shoot, shootName } from "../../src/providers/gardener-shoot.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { buildingKindsTimed, mergeKindSettings } from "../../src/runtime/kinds/registry.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import {
  bearerClient,
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  expectGroupReader,
  issuedKubeconfig,
  statusOf,
} from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { aCluster, aClusterPool, aProviderConfig } from "../support/builders.ts";
import { clusterWhereOn } from "../support/cluster-where.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type GardenerBackendWorld, startGardenerBackendWorld } from "../support/gardener-backend-world.ts";
import { type CustomResource, orAbsent, readCustomObject } from "../support/maybe-absent.ts";
import { startMutatingWebhook } from "../support/mutating-webhook.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";
import { profileOffered } from "../support/profile-offered.ts";

const NS = "gardener-test";
const PROVIDER = "gardener-test";
const profileOf = (config: string) => `test.${PROVIDER}.${config}`;
const PAST = "2020-01-01T00:00:00Z";
const FUTURE = "2099-01-01T00:00:00Z";
let world: GardenerBackendWorld;
let gardenlet: SimulatedGardenlet;
let engine: Engine;
let issuer: OidcIssuer | undefined;
const HOLD = "metadata.open-control-plane.io/hold";
/** Shoots of Clusters labelled so fail to be created, with the label's value as gardenlet's description. */
const FAIL = "metadata.open-control-plane.io/fail";
let released = false;
/** Backend create calls by Cluster name, and Cluster reconciles by key. */
const creates = new Map<string, number>();
const reconciles = new Map<string, number>();
const reconcilesOf = (name: string) => reconciles.get(`${NS}/${name}`) ?? 0;

const read = <T>(resource: CustomResource, name: string) =>
  readCustomObject<T>(world.custom, resource, NS, name);
const clusterWhere = (name: string, what: string, wanted: (c: Cluster) => boolean, timeoutMs = 120_000) =>
  clusterWhereOn(world.custom, NS, name, what, wanted, { timeoutMs, intervalMs: 250 });
/** Waits until the AccessRequest is Granted. */
const granted = (name: string) =>
  accessGranted(world.custom, NS, name, { timeoutMs: 120_000, intervalMs: 500 });
const targetOf = (c: Cluster, config = "dev"): ClusterTarget => ({
  uid: c.metadata.uid ?? "",
  namespace: NS,
  name: c.metadata.name ?? "",
  tenancy: "Exclusive",
  profile: profileOf(config),
  providerConfig: config,
  ...(c.metadata.labels ? { labels: c.metadata.labels } : {}),
});

/** A ProviderConfig of the gardener backend for project `project`, with a workerless template. */
function gardenerConfig(
  name: string,
  project: string,
  spec: object = workerlessShootSpec("local"),
  provider = PROVIDER,
) {
  return aProviderConfig({
    name,
    backend: "gardener",
    // Named, not claimed: the test's engine and the killed one both run the gardener backend.
    providerRef: { name: provider },
    settings: {
      kubeconfigSecretRef: { namespace: NS, name: "garden" },
      project,
      shootTemplate: { metadata: { labels: { team: "platform" } }, spec: spec as never },
    },
  });
}

/** Deletes Cluster `name` and waits until it is gone; `what` names the wait. */
async function deleteCluster(name: string, what: string, timeoutMs?: number) {
  await world.custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name });
  await eventually(async () => expect(await read(RESOURCES.Cluster, name)).toBeUndefined(), {
    what,
    ...(timeoutMs ? { timeoutMs } : {}),
  });
}

/** The names of the project's Shoots, sorted. */
async function shootNames(): Promise<string[]> {
  const list = (await world.gardenApi.listNamespacedCustomObject({
    group: "core.gardener.cloud",
    version: "v1beta1",
    plural: "shoots",
    namespace: world.projectNamespace,
  })) as { items: Shoot[] };
  return list.items.map((shoot) => shoot.metadata.name ?? "").sort();
}

async function createCluster(
  name: string,
  version?: string,
  labels?: Record<string, string>,
  config = "dev",
) {
  const body = aCluster({ name, namespace: NS, profile: profileOf(config), tenancy: "Exclusive", version });
  return (await world.custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: { ...body, metadata: { ...body.metadata, ...(labels ? { labels } : {}) } },
  })) as Cluster;
}

beforeAll(async () => {
  world = await startGardenerBackendWorld({
    namespace: NS,
    project: "dev",
    versions: [
      { version: "1.36.0", classification: "preview" },
      {
        version: "1.35.1",
        lifecycle: [{ classification: "preview" }, { classification: "supported", startTime: PAST }],
      },
      {
        version: "1.35.0",
        lifecycle: [{ classification: "supported" }, { classification: "deprecated", startTime: FUTURE }],
      },
      { version: "1.34.2", classification: "supported" },
      { version: "1.33.9", classification: "deprecated" },
      { version: "1.33.8", classification: "deprecated", expirationDate: PAST },
      {
        version: "1.32.0",
        lifecycle: [{ classification: "supported" }, { classification: "expired", startTime: PAST }],
      },
    ],
  });
  await world.management.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: "garden" },
      stringData: { kubeconfig: readFileSync(world.garden.kubeconfigPath, "utf8") },
    },
  });
  gardenlet = new SimulatedGardenlet({
    kubeConfig: world.garden.kubeConfig,
    // Shoots of Clusters labelled so stay in `Create Processing` until the test lets them go.
    hold: (shoot) => shoot.metadata.labels?.[HOLD] === "true" && !released,
    fail: (shoot) => shoot.metadata.labels?.[FAIL],
  });
  // Counts create calls per Cluster, to see that a refused Shoot is retried with backoff, not in a storm.
  const counted = new Proxy(world.backend, {
    get(real, property) {
      if (property === "create")
        return (target: ClusterTarget, version: string) => {
          creates.set(target.name, (creates.get(target.name) ?? 0) + 1);
          return real.create(target, version);
        };
      const value = Reflect.get(real, property, real);
      return typeof value === "function" ? value.bind(real) : value;
    },
  });
  engine = new Engine({
    kubeConfig: world.management.kubeConfig,
    providerName: PROVIDER,
    environment: "test",
    backend: counted,
    // Ready Clusters are looked at every second, so "nothing is written at rest" is seen over many looks.
    kindSettings: mergeKindSettings(buildingKindsTimed({ pollMs: 500, retryMs: 1_000, resyncMs: 1_000 }), {
      Cluster: { pools: true },
      AccessRequest: {
        timing: { tokenValidityMs: 600_000, pollMs: 1_000, retryMs: 1_000, resyncMs: 60_000 },
      },
    }),
    onReconciled: (kind, key) => {
      if (kind === "Cluster") reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
    },
    log: createLogger({ level: "debug", write: (line) => world.logLines.push(line) }),
  });
  await engine.start();
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: gardenerConfig("dev", "dev"),
  });
}, 3_600_000);

afterAll(async () => {
  await engine?.stop();
  await gardenlet?.stop();
  await issuer?.stop();
  await world?.stop();
}, 120_000);

describe("the gardener backend on Gardener's API server", { timeout: 300_000 }, () => {
  it("offers the CloudProfile's supported and deprecated versions, newest first; preview, expired and lifecycle-expired left out", async () => {
    const profile = await profileOffered(world.custom, profileOf("dev"));
    expect(profile.spec.supportedVersions).toEqual([
      { version: "1.35.1" },
      { version: "1.35.0" },
      { version: "1.34.2" },
      { version: "1.33.9", deprecated: true },
    ]);
    expect(profile.metadata.annotations?.["engine.openmcp.cloud/traits"]).toBe(
      "provider-local,region-local,workerless",
    );
  });

  it("makes a Cluster a Shoot: template, labels, resolved version; Ready with the Shoot's API server as apiserver-external", async () => {
    await createCluster("one", "1.34", { "metadata.open-control-plane.io/tenant": "acme" });
    const cluster = await clusterWhere("one", "Ready", (c) => c.status?.phase === "Ready");
    const name = shootName(targetOf(cluster));
    const shoot = await world.readShoot(name);
    expect(shoot?.spec.kubernetes?.version).toBe("1.34.2");
    expect(shoot?.spec.region).toBe("local");
    expect(shoot?.metadata.labels).toMatchObject({
      team: "platform",
      "metadata.open-control-plane.io/tenant": "acme",
    });
    expect(shoot?.metadata.annotations).toMatchObject({
      [GARDENER_KEYS.clusterAnnotation]: `${NS}/one`,
      [GARDENER_KEYS.clusterUidAnnotation]: cluster.metadata.uid,
    });
    const external = shoot?.status?.advertisedAddresses?.find((a) => a.name === "external")?.url;
    expect(cluster.status?.endpoints).toEqual([{ name: "apiserver-external", url: external }]);
    expect(cluster.metadata.labels?.[CLUSTER_LABELS.k8sVersion]).toBe("1.34.2");
    // The Shoot's conditions and last operation, as the simulated gardenlet reported them, on the Cluster.
    expect(conditionOf(cluster, "ShootAPIServerAvailable")).toMatchObject({
      status: "True",
      reason: "HealthyByGardenletSimulation",
      message: "simulated gardenlet: the control plane runs",
    });
    expect(conditionOf(cluster, "ShootLastOperation")).toMatchObject({
      status: "True",
      reason: "CreateSucceeded",
      message: "Create Succeeded (100%): Create succeeded (simulated gardenlet)",
    });
    expect(cluster.metadata.annotations?.["clusters.openmcp.cloud/providerinfo"]).toBe(
      `Shoot ${world.projectNamespace}/${name}: Create Succeeded (100%)`,
    );
  });

  it("takes over a Shoot openMCP's Gardener provider made for a Cluster (its labels naming the Cluster): served as it runs, not made again, deleted with the Cluster", async () => {
    // As openMCP's Gardener provider leaves it: a Shoot of its own name, labelled with the Cluster it serves.
    const template = (await world.readShoot(shootName(targetOf(await clusterWhere("one", "Ready", Boolean)))))
      ?.spec;
    await world.gardenApi.createNamespacedCustomObject({
      group: "core.gardener.cloud",
      version: "v1beta1",
      plural: "shoots",
      namespace: world.projectNamespace,
      body: {
        apiVersion: "core.gardener.cloud/v1beta1",
        kind: "Shoot",
        metadata: {
          name: "legacy1",
          labels: {
            "gardener.clusters.openmcp.cloud/cluster-name": "taken",
            "gardener.clusters.openmcp.cloud/cluster-namespace": NS,
            "gardener.clusters.openmcp.cloud/provider-name": "gardener",
          },
        },
        spec: template,
      },
    });
    const made = await eventually(
      async () =>
        satisfying(
          await world.readShoot("legacy1"),
          (shoot) => shoot?.status?.lastOperation?.state === "Succeeded",
        ),
      { what: "Shoot legacy1 made by the simulated gardenlet", timeoutMs: 120_000 },
    );
    const shootsBefore = await shootNames();
    await createCluster("taken", "1.34");
    const cluster = await clusterWhere("taken", "Ready", (c) => c.status?.phase === "Ready");
    const taken = await world.readShoot("legacy1");
    expect(taken?.metadata.uid).toBe(made?.metadata.uid);
    expect(taken?.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation]).toBe(cluster.metadata.uid);
    expect(taken?.metadata.labels?.["gardener.clusters.openmcp.cloud/cluster-name"]).toBe("taken");
    const external = taken?.status?.advertisedAddresses?.find((a) => a.name === "external")?.url;
    expect(cluster.status?.endpoints).toEqual([{ name: "apiserver-external", url: external }]);
    expect(await shootNames()).toEqual(shootsBefore); // none made under the engine's own name
    await deleteCluster("taken", "Cluster taken gone with its Shoot", 180_000);
    expect(await world.readShoot("legacy1")).toBeUndefined();
  });

  it("applies the ClusterConfigs a Cluster names, its own and those openMCP's IPAM service appends: the appended entry kept, applied once its ClusterConfig exists, its reconcile consumed only once the Shoot has it", async () => {
    const clusterConfig = (name: string, spec: object, labels?: Record<string, string>) =>
      world.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterConfig,
        namespace: NS,
        body: {
          apiVersion: `${RESOURCES.ClusterConfig.group}/${RESOURCES.ClusterConfig.version}`,
          kind: "ClusterConfig",
          metadata: { name, namespace: NS, ...(labels ? { labels } : {}) },
          spec,
        },
      });
    // Gardener admits only registered extension types; a patch is what every garden accepts.
    await clusterConfig("evaluation", {
      patches: [{ op: "add", path: "/spec/purpose", value: "evaluation" }],
    });
    // IPAM's webhook, played by the test on the real API server: it appends a ClusterConfig of its own to
    // every Cluster it manages, before its controller has made that ClusterConfig.
    const webhook = await startMutatingWebhook(world.management.kubeConfig, {
      name: "ipam.test.openmcp.cloud",
      resource: RESOURCES.Cluster,
      objectSelector: { matchLabels: { "ipam.test/managed": "true" } },
      mutate: (object) => {
        const name = (object.metadata as { name: string }).name;
        const listed = (object.spec as { clusterConfigs?: unknown[] }).clusterConfigs;
        return listed
          ? [{ op: "add", path: "/spec/clusterConfigs/-", value: { name: `ipam-${name}` } }]
          : [{ op: "add", path: "/spec/clusterConfigs", value: [{ name: `ipam-${name}` }] }];
      },
    });
    try {
      const body = aCluster({
        name: "configured",
        namespace: NS,
        profile: profileOf("dev"),
        tenancy: "Exclusive",
        labels: { "ipam.test/managed": "true" },
      });
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NS,
        body: { ...body, spec: { ...body.spec, clusterConfigs: [{ name: "evaluation" }] } },
      });
      const both = [{ name: "evaluation" }, { name: "ipam-configured" }];
      expect((await read<Cluster>(RESOURCES.Cluster, "configured"))?.spec.clusterConfigs).toEqual(both);
      // Not made while IPAM's ClusterConfig is missing: said on the Cluster, naming it.
      await clusterWhere("configured", "the missing ClusterConfig named", (c) =>
        (c.status?.conditions ?? []).some((x) =>
          x.message?.includes(
            `ClusterConfig ${NS}/ipam-configured (spec.clusterConfigs of Cluster ${NS}/configured) does not exist`,
          ),
        ),
      );
      expect(await shootNames()).not.toContain(
        shootName(targetOf((await read<Cluster>(RESOURCES.Cluster, "configured")) as Cluster)),
      );

      // IPAM's controller makes its ClusterConfig (a disjoint service CIDR) and asks for a reconcile.
      const cidr = "100.72.0.0/16";
      await clusterConfig(
        "ipam-configured",
        { patches: [{ op: "add", path: "/spec/networking", value: { services: cidr } }] },
        { "openmcp.cloud/managed-purpose": "gardener-ipam" },
      );
      await world.custom.patchNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NS,
        name: "configured",
        body: [
          { op: "add", path: "/metadata/annotations", value: { "openmcp.cloud/operation": "reconcile" } },
        ],
      });
      // IPAM reads the annotation's removal as done: by then the Shoot carries its CIDR.
      const consumed = await clusterWhere(
        "configured",
        "the reconcile annotation consumed",
        (c) => c.metadata.annotations?.["openmcp.cloud/operation"] === undefined,
        120_000,
      );
      const shootThen = await world.readShoot(shootName(targetOf(consumed)));
      expect(shootThen?.spec.networking).toMatchObject({ services: cidr });

      const cluster = await clusterWhere("configured", "Ready", (c) => c.status?.phase === "Ready");
      expect(conditionOf(cluster, "ShootClusterConfigs")).toMatchObject({ status: "True" });
      expect(cluster.spec.clusterConfigs).toEqual(both);
      const shoot = await world.readShoot(shootName(targetOf(cluster)));
      expect(shoot?.spec.purpose).toBe("evaluation");
      expect(shoot?.spec.networking).toMatchObject({ services: cidr });
      expect(webhook.calls).toBe(1);
    } finally {
      await webhook.stop();
    }
    // Gone again, so the later tests count only Cluster one's Shoot.
    await deleteCluster("configured", "Cluster configured gone", 120_000);
  });

  it("writes nothing at rest: the Shoot and the Cluster stay still over several reconciles of a Ready Cluster", async () => {
    const cluster = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const shoot = await world.readShoot(shootName(targetOf(cluster)));
    const seen = reconcilesOf("one");
    await eventually(() => reconcilesOf("one") >= seen + 3, { what: "three more reconciles of Cluster one" });
    expect((await world.readShoot(shootName(targetOf(cluster))))?.metadata.resourceVersion).toBe(
      shoot?.metadata.resourceVersion,
    );
    expect((await read<Cluster>(RESOURCES.Cluster, "one"))?.metadata.resourceVersion).toBe(
      cluster.metadata.resourceVersion,
    );
  });

  it("gives admin access through the Shoot's adminkubeconfig, which really works on the Shoot's API server", async () => {
    const cluster = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const access = await world.backend.adminAccess(targetOf(cluster));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(access?.kubeconfig ?? "");
    expect(kubeConfig.getCurrentUser()?.certData).toBeTruthy(); // a client certificate Gardener signed
    expect(kubeConfig.getCurrentCluster()?.server).toBe(cluster.status?.endpoints?.[0]?.url);
    const namespaces = await kubeConfig.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");
  });

  it("hibernates and wakes a Cluster through its annotation: the Shoot's spec.hibernation.enabled (a person's schedules kept), status.hibernated from the simulated gardenlet, the same endpoint, and the admin kubeconfig of before works after", async () => {
    const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
    const cluster = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const target = targetOf(cluster);
    const name = shootName(target);
    const endpoint = cluster.status?.endpoints?.[0]?.url;
    const shootPatch = (body: object) =>
      world.gardenApi.patchNamespacedCustomObject(
        { ...CORE, plural: "shoots", namespace: world.projectNamespace, name, body },
        merge,
      );
    const askSleep = (value: string) =>
      world.custom.patchNamespacedCustomObject(
        {
          ...RESOURCES.Cluster,
          namespace: NS,
          name: "one",
          body: { metadata: { annotations: { [HIBERNATE_ANNOTATION]: value } } },
        },
        merge,
      );
    const access = await world.backend.adminAccess(target);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(access?.kubeconfig ?? "");
    const schedules = [{ start: "0 22 * * 1-5", location: "UTC" }];
    await shootPatch({ spec: { hibernation: { schedules } } }); // a person's, on the Shoot itself

    await askSleep("true");
    const asleep = await clusterWhere(
      "one",
      "hibernated",
      (c) => conditionOf(c, "ClusterReady")?.reason === "Hibernated",
    );
    const shoot = await world.readShoot(name);
    expect(shoot?.spec.hibernation).toEqual({ enabled: true, schedules });
    expect(shoot?.status?.hibernated).toBe(true); // the simulated gardenlet's word
    expect(await world.backend.observe(target)).toMatchObject({ phase: "hibernated", endpoint });
    expect(asleep.status?.endpoints?.[0]?.url).toBe(endpoint);
    expect(conditionOf(asleep, "ShootAPIServerAvailable")).toMatchObject({ reason: "ConditionNotChecked" });
    await expect(kubeConfig.makeApiClient(CoreV1Api).listNamespace()).rejects.toThrow(); // nothing serves
    await world.backend.hibernate(target); // idempotent: nothing changes
    expect((await world.readShoot(name))?.metadata.resourceVersion).toBe(shoot?.metadata.resourceVersion);

    await askSleep("false");
    const awake = await clusterWhere("one", "Ready again", (c) => c.status?.phase === "Ready");
    expect(awake.status?.endpoints?.[0]?.url).toBe(endpoint);
    const woken = await world.readShoot(name);
    expect(woken?.spec.hibernation).toEqual({ enabled: false, schedules });
    expect(woken?.status?.hibernated).toBe(false);
    expect(await world.backend.observe(target)).toMatchObject({ phase: "ready", endpoint });
    // The same kubeconfig: same endpoint, same cluster CA, its client certificate still trusted; the data kept.
    const namespaces = await kubeConfig.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");
    expect(
      await kubeConfig.makeApiClient(RbacAuthorizationV1Api).readClusterRoleBinding({
        name: "gardener.cloud:system:admins",
      }),
    ).toBeTruthy();
    await shootPatch({ spec: { hibernation: { schedules: null } } });
  });

  it("grants a token AccessRequest whose kubeconfig does exactly what was asked on the Shoot", async () => {
    await createAccessRequest(
      world.custom,
      NS,
      "token",
      configMapTokenRequest({ name: "one", namespace: NS }),
    );
    await granted("token");
    const { text, kubeConfig } = await issuedKubeconfig(
      world.management.kubeConfig.makeApiClient(CoreV1Api),
      NS,
      "token.kubeconfig",
    );
    expect(text).not.toContain("client-key-data"); // a token of its own, not Gardener's admin certificate
    await expectConfigMapAccessOnly(kubeConfig);
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      name: "token",
    });
  });

  it("grants an OIDC AccessRequest through the Shoot's structured authentication ConfigMap, with the request's prefix", async () => {
    issuer = await startOidcIssuer();
    await world.custom.patchClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "dev",
      body: [
        {
          op: "add",
          path: "/spec/settings/oidcCertificateAuthority",
          value: issuer.certificateAuthority,
        },
      ],
    });
    await createAccessRequest(world.custom, NS, "oidc", {
      clusterRef: { name: "one", namespace: NS },
      oidc: {
        name: "corp",
        issuer: issuer.url,
        clientID: "gardener-test",
        roleBindings: [
          {
            subjects: [
              { kind: "Group", name: "readers" },
              { kind: "User", name: "::root" },
            ],
            roleRefs: [{ kind: "ClusterRole", name: "view" }],
          },
        ],
      },
    });
    await granted("oidc");
    const cluster = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const name = shootName(targetOf(cluster));
    const shoot = await world.readShoot(name);
    const configMap = (
      shoot?.spec.kubernetes as { kubeAPIServer?: { structuredAuthentication?: { configMapName?: string } } }
    )?.kubeAPIServer?.structuredAuthentication?.configMapName;
    expect(configMap).toBe(`${name}-authentication`);
    const stored = await world.garden.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: world.projectNamespace, name: configMap ?? "" });
    expect(stored.data?.["config.yaml"]).toContain(issuer.url);
    // The Shoot's new authentication configuration is being reconciled: admin access once it is Ready again.
    const access = await eventually(
      async () => satisfying(await world.backend.adminAccess(targetOf(cluster)), (a) => a !== undefined),
      { what: `admin access to Shoot ${name} once it is Ready again`, timeoutMs: 60_000, intervalMs: 500 },
    );
    const admin = new KubeConfig();
    admin.loadFromString(access?.kubeconfig ?? "");
    const withToken = async (subject: string, groups: string[], audience = "gardener-test") =>
      bearerClient(admin, await (issuer as OidcIssuer).token({ audience, subject, groups }));
    const alice = await withToken("alice", ["readers"]);
    await expectGroupReader(alice, "alice (group corp:readers) may list configmaps on the Shoot", {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    // The request's bindings on the Shoot: the group with the request's prefix, `::root` as "root" without one.
    const bindings = await admin.makeApiClient(RbacAuthorizationV1Api).listClusterRoleBinding();
    const subjects = bindings.items.flatMap((b) => (b.subjects ?? []).map((x) => `${x.kind}:${x.name}`));
    expect(subjects).toEqual(expect.arrayContaining(["Group:corp:readers", "User:root"]));
    expect(subjects).not.toContain("User:corp:root");
    expect(
      await statusOf((await withToken("bob", ["others"])).listNamespacedConfigMap({ namespace: "default" })),
    ).toBe(403);
    expect(
      await statusOf(
        (await withToken("alice", ["readers"], "other")).listNamespacedConfigMap({ namespace: "default" }),
      ),
    ).toBe(401);
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      name: "oidc",
    });
    await eventually(
      async () => expect(await statusOf(alice.listNamespacedConfigMap({ namespace: "default" }))).toBe(401),
      { what: "the issuer no longer trusted once the request is gone", timeoutMs: 60_000, intervalMs: 500 },
    );
  });

  it("upgrades through the Cluster's spec with one patch of the Shoot's version, and refuses a downgrade with a condition", async () => {
    const before = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const name = shootName(targetOf(before));
    const generation = (await world.readShoot(name))?.metadata.generation ?? 0;
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "one",
      body: [{ op: "replace", path: "/spec/kubernetes/version", value: "1.35.1" }],
    });
    await clusterWhere(
      "one",
      "Ready at 1.35.1",
      (c) => c.metadata.labels?.[CLUSTER_LABELS.k8sVersion] === "1.35.1" && c.status?.phase === "Ready",
    );
    const upgraded = await world.readShoot(name);
    expect(upgraded?.spec.kubernetes?.version).toBe("1.35.1");
    expect(upgraded?.metadata.generation).toBe(generation + 1); // exactly one spec change

    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "one",
      body: [{ op: "replace", path: "/spec/kubernetes/version", value: "1.34.2" }],
    });
    const refused = await clusterWhere(
      "one",
      "downgrade refused",
      (c) => conditionOf(c, "VersionSupported")?.reason === "DowngradeNotAllowed",
    );
    expect(conditionOf(refused, "VersionSupported")?.message).toContain("1.35.1");
    expect((await world.readShoot(name))?.spec.kubernetes?.version).toBe("1.35.1");
  });

  it("brings the Shoot in line when labels or the template change, at the same version, and then rests", async () => {
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "one",
      body: [
        { op: "replace", path: "/spec/kubernetes/version", value: "1.35.1" },
        { op: "remove", path: "/metadata/labels/metadata.open-control-plane.io~1tenant" },
        { op: "add", path: "/metadata/labels/metadata.open-control-plane.io~1stage", value: "prod" },
      ],
    });
    const config = (await world.custom.getClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "dev",
    })) as ProviderConfig;
    const template = (config.spec.settings?.shootTemplate ?? {}) as { spec: object };
    await world.custom.patchClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "dev",
      body: [
        {
          op: "replace",
          path: "/spec/settings/shootTemplate",
          value: {
            metadata: { labels: { team: "core" } },
            spec: { ...template.spec, purpose: "development" },
          },
        },
      ],
    });
    const cluster = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const name = shootName(targetOf(cluster));
    const shoot = await eventually(
      async () =>
        satisfying(
          await world.readShoot(name),
          (x) => x?.spec.purpose === "development" && x.metadata.labels?.team === "core",
        ),
      { what: `Shoot ${name} with the new template`, timeoutMs: 60_000 },
    );
    expect(shoot?.metadata.labels).toMatchObject({ "metadata.open-control-plane.io/stage": "prod" });
    expect(shoot?.metadata.labels?.["metadata.open-control-plane.io/tenant"]).toBeUndefined();
    expect(shoot?.spec.kubernetes?.version).toBe("1.35.1");
    // Settled: gardenlet has reconciled the new spec (observedGeneration) and the Cluster is Ready.
    const settled = await eventually(
      async () =>
        satisfying(
          await world.readShoot(name),
          (x) => (x?.status?.observedGeneration ?? 0) >= (x?.metadata.generation ?? 1),
        ),
      { what: `Shoot ${name} reconciled by the simulated gardenlet` },
    );
    await clusterWhere("one", "Ready again", (c) => c.status?.phase === "Ready");
    const seen = reconcilesOf("one");
    await eventually(() => reconcilesOf("one") >= seen + 3, { what: "three more reconciles of Cluster one" });
    expect((await world.readShoot(name))?.metadata.resourceVersion).toBe(settled?.metadata.resourceVersion);
  });

  it("refuses a Shoot name another Cluster's Shoot has, naming that Cluster", async () => {
    const one = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    await createCluster("two", undefined, { [GARDENER_KEYS.shootNameLabel]: shootName(targetOf(one)) });
    const two = await clusterWhere("two", "name conflict", (c) =>
      (conditionOf(c, "ClusterReady")?.message ?? "").includes("belongs to Cluster"),
    );
    expect(conditionOf(two, "ClusterReady")?.message).toContain(`belongs to Cluster ${NS}/one`);
    expect(conditionOf(two, "ClusterReady")?.reason).toBe("BackendError");
    await deleteCluster("two", "Cluster two gone (it never had a Shoot)");
    expect((await world.readShoot(shootName(targetOf(one))))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it("turns Gardener's admission refusing a Shoot into a condition carrying Gardener's message", async () => {
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: gardenerConfig("atlantis", "dev", { ...workerlessShootSpec("local"), region: "atlantis" }),
    });
    await eventually(
      async () =>
        world.custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: profileOf("atlantis") }),
      { what: "profile atlantis" },
    );
    await createCluster("sunk", undefined, undefined, "atlantis");
    const sunk = await clusterWhere("sunk", "refused by Gardener", (c) =>
      (conditionOf(c, "ClusterReady")?.message ?? "").includes("Unsupported value"),
    );
    expect(conditionOf(sunk, "ClusterReady")?.message).toContain(
      "Gardener refused creating Shoot garden-dev/",
    );
    expect(conditionOf(sunk, "ClusterReady")?.message).toContain(
      'spec.region: Unsupported value: "atlantis"',
    );
    // Retried with the engine's growing backoff; the condition and its Event are written once, not per retry.
    const attempts = creates.get("sunk") ?? 0;
    await eventually(() => (creates.get("sunk") ?? 0) >= attempts + 2, {
      what: "two more create attempts for sunk",
    });
    expect((await read<Cluster>(RESOURCES.Cluster, "sunk"))?.metadata.resourceVersion).toBe(
      sunk.metadata.resourceVersion,
    );
    const events = await world.management.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: NS, fieldSelector: "involvedObject.name=sunk,reason=BackendError" });
    expect(events.items.map((e) => e.count ?? 1)).toEqual([1]);
    await deleteCluster("sunk", "Cluster sunk gone");
    // The ProviderConfig deleted: its profile goes.
    await world.custom.deleteClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "atlantis" });
    await eventually(
      async () =>
        expect(
          await statusOf(
            world.custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: profileOf("atlantis") }),
          ),
        ).toBe(404),
      { what: "profile atlantis gone with its ProviderConfig" },
    );
  });

  it("shows a Shoot whose creation failed as a failed Cluster, with Gardener's description on its conditions", async () => {
    await createCluster("doomed", undefined, { [FAIL]: "QuotaExceeded" });
    const doomed = await clusterWhere(
      "doomed",
      "failed",
      (c) =>
        conditionOf(c, "ShootLastOperation")?.status === "False" &&
        conditionOf(c, "ClusterReady")?.reason === "BackendError",
    );
    expect(conditionOf(doomed, "ShootLastOperation")).toMatchObject({
      reason: "CreateFailed",
      message: "Create Failed (10%): QuotaExceeded; infrastructure: QuotaExceeded",
    });
    expect(conditionOf(doomed, "ClusterReady")?.message).toContain("Gardener: Create failed: QuotaExceeded");
    expect(doomed.status?.phase).toBe("Progressing");
    await deleteCluster("doomed", "Cluster doomed gone with its Shoot");
  });

  it("shows a missing project and an unreachable garden on the ProviderConfig, and offers no profile", async () => {
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: gardenerConfig("ghost", "ghost"),
    });
    await world.management.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: { name: "nowhere" },
        stringData: {
          kubeconfig: readFileSync(world.garden.kubeconfigPath, "utf8").replace(
            /server: https:\/\/127\.0\.0\.1:\d+/,
            "server: https://127.0.0.1:1",
          ),
        },
      },
    });
    const unreachable = gardenerConfig("offline", "dev");
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: {
        ...unreachable,
        spec: {
          ...unreachable.spec,
          settings: { ...unreachable.spec.settings, kubeconfigSecretRef: { namespace: NS, name: "nowhere" } },
        },
      },
    });
    const ready = async (name: string) =>
      conditionOf(
        (await world.custom.getClusterCustomObject({ ...RESOURCES.ProviderConfig, name })) as ProviderConfig,
        "Ready",
      );
    const ghost = await eventually(
      async () => satisfying(await ready("ghost"), (c) => c?.reason === "ConfigurationProblem"),
      {
        what: "ProviderConfig ghost: ConfigurationProblem",
      },
    );
    expect(ghost?.message).toContain("Gardener project ghost does not exist in the garden");
    const offline = await eventually(
      async () => satisfying(await ready("offline"), (c) => c?.reason === "ConfigurationProblem"),
      { what: "ProviderConfig offline: ConfigurationProblem" },
    );
    expect(offline?.message).toContain("garden at https://127.0.0.1:1 unreachable");
    const noProfile = gardenerConfig("noprofile", "dev", { ...workerlessShootSpec("nope") });
    await world.custom.createClusterCustomObject({ ...RESOURCES.ProviderConfig, body: noProfile });
    const missing = await eventually(
      async () => satisfying(await ready("noprofile"), (c) => c?.reason === "ConfigurationProblem"),
      { what: "ProviderConfig noprofile: ConfigurationProblem" },
    );
    expect(missing?.message).toContain("CloudProfile nope does not exist in the garden");
    for (const name of ["ghost", "offline", "noprofile"]) {
      expect(
        await statusOf(
          world.custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: profileOf(name) }),
        ),
      ).toBe(404);
    }
  });

  it("resumes after kill -9 of the engine mid-provisioning: one Shoot, then Ready", async () => {
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: gardenerConfig("kill", "dev", workerlessShootSpec("local"), "gkill"),
    });
    const stateDir = mkdtempSync(join(tmpdir(), "gardener-kill-"));
    const run = () =>
      startEngineCli(
        engineRunArgs(
          { provider: "gkill", environment: "test", kubeconfig: world.management.kubeconfigPath, stateDir },
          "--backend=gardener",
          "--no-leader-elect",
        ),
      );
    const first = run();
    let second: ReturnType<typeof run> | undefined;
    try {
      const body = aCluster({
        name: "kill",
        namespace: NS,
        profile: "test.gkill.kill",
        tenancy: "Exclusive",
      });
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NS,
        body: { ...body, metadata: { ...body.metadata, labels: { [HOLD]: "true" } } },
      });
      const shootsOfKill = async () => {
        const list = (await world.gardenApi.listNamespacedCustomObject({
          ...CORE,
          namespace: world.projectNamespace,
          plural: "shoots",
        })) as { items: Shoot[] };
        return list.items.filter(
          (x) => x.metadata.annotations?.[GARDENER_KEYS.clusterAnnotation] === `${NS}/kill`,
        );
      };
      await eventually(
        async () =>
          satisfying(await shootsOfKill(), (list) => list[0]?.status?.lastOperation?.state === "Processing"),
        {
          what: `Shoot of Cluster kill in Create Processing (engine output: ${first.output().slice(-300)})`,
          timeoutMs: 120_000,
        },
      );
      first.child.kill("SIGKILL");
      await new Promise((resolve) => first.child.once("exit", resolve));
      released = true;
      second = run();
      const ready = await clusterWhere("kill", "Ready after the restart", (c) => c.status?.phase === "Ready");
      const shoots = await shootsOfKill();
      expect(shoots.map((x) => x.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation])).toEqual([
        ready.metadata.uid,
      ]);
      await deleteCluster("kill", "Cluster kill gone", 120_000);
      expect(await shootsOfKill()).toEqual([]);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL");
      if (second) {
        second.child.kill("SIGTERM");
        await new Promise((resolve) => second?.child.once("exit", resolve));
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 400_000); // two engine processes started on a machine the whole suite shares

  it("deletes: the Shoot is confirmed for deletion and deleted, gardenlet lets go, then the Cluster goes", async () => {
    const one = (await read<Cluster>(RESOURCES.Cluster, "one")) as Cluster;
    const name = shootName(targetOf(one));
    // A foreign finalizer (a ClusterRequest's, say) holds the deletion: the Shoot is left alone meanwhile.
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "one",
      body: [{ op: "add", path: "/metadata/finalizers/-", value: "example.com/hold" }],
    });
    await world.custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "one" });
    await clusterWhere(
      "one",
      "waiting for the foreign finalizer",
      (c) => conditionOf(c, "DeletionUnblocked")?.status === "False",
    );
    const held = await world.readShoot(name);
    expect(held?.metadata.deletionTimestamp).toBeUndefined();
    expect(held?.metadata.annotations?.[GARDENER_KEYS.deletionConfirmation]).toBeUndefined();
    const finalizers = (await read<Cluster>(RESOURCES.Cluster, "one"))?.metadata.finalizers ?? [];
    await world.custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "one",
      body: [
        { op: "test", path: "/metadata/finalizers", value: finalizers },
        {
          op: "replace",
          path: "/metadata/finalizers",
          value: finalizers.filter((f) => f !== "example.com/hold"),
        },
      ],
    });
    await eventually(async () => expect(await read(RESOURCES.Cluster, "one")).toBeUndefined(), {
      what: "Cluster one gone",
      timeoutMs: 120_000,
    }).catch((error: Error) => {
      throw new Error(
        `${error.message}; the simulated gardenlet's last errors: ${gardenlet.errors.slice(-3).join(" | ")}`,
      );
    });
    expect(await world.readShoot(name)).toBeUndefined();
    expect(world.backend.shootCount).toBe(0);
    expect(world.logLines.some((line) => line.includes("Shoot deletion ordered"))).toBe(true);
  });

  it("serves a new Cluster from a ClusterPool: bound to the idle member's Shoot, Ready with no Shoot of its own, deleted with it", async () => {
    const readPool = () =>
      orAbsent(
        world.custom.getClusterCustomObject({
          ...RESOURCES.ClusterPool,
          name: "warm",
        }) as Promise<ClusterPool>,
      );
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ClusterPool,
      body: aClusterPool("warm", { providerConfig: "dev", idle: 1, refill: false }), // one Shoot is enough to prove the binding
    });
    const pool = await eventually(async () => satisfying(await readPool(), (p) => p?.status?.idle === 1), {
      what: "pool warm with 1 Ready Shoot",
      timeoutMs: 120_000,
    });
    const id = pool?.status?.members?.[0]?.id ?? "";
    const started = performance.now();
    await createCluster("warm-one");
    const cluster = await clusterWhere("warm-one", "Ready", (c) => c.status?.phase === "Ready");
    console.log(
      `Cluster warm-one Ready ${Math.round(performance.now() - started)} ms after its creation, from the pool`,
    );
    expect(cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember]).toBe(`warm/${id}`);
    const shoot = await world.readShoot(memberShootName(id));
    expect(shoot?.metadata.annotations).toMatchObject({
      [GARDENER_KEYS.boundToAnnotation]: cluster.metadata.uid,
      [GARDENER_KEYS.clusterUidAnnotation]: id,
      [GARDENER_KEYS.clusterAnnotation]: `${NS}/warm-one`,
      [GARDENER_KEYS.poolMemberAnnotation]: `warm/${id}`,
    });
    expect(await world.readShoot(shootName(targetOf(cluster)))).toBeUndefined();

    await deleteCluster("warm-one", "Cluster warm-one gone", 120_000);
    expect(await world.readShoot(memberShootName(id))).toBeUndefined();
    await world.custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" });
    await eventually(async () => expect(await readPool()).toBeUndefined(), {
      what: "pool warm gone",
      timeoutMs: 60_000,
    });
    expect(world.backend.shootCount).toBe(0);
  });
});
