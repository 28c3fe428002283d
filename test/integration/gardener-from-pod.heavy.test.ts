/**
 * The `gardener` backend from a Pod, as Gardener users run a provider: the engine's image in a kind management
 * cluster, deployed with `deploy/base` (least-privilege RBAC, no backend flag: the ProviderConfig names
 * `gardener`), the garden's kubeconfig in a Secret. The garden runs on the host as in the other Gardener tests
 * (Gardener's own gardener-apiserver aggregated on a kube-apiserver, a SIMULATED gardenlet making each Shoot a
 * real local control plane), reachable from the kind network at the host's gateway on it. The Pod makes a
 * Shoot for a Cluster and grants a token AccessRequest through it; a rotated garden Secret is used from the
 * next call on, with no restart; deleting the Cluster deletes the Shoot.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import {
  applyCloudProfile,
  CORE,
  createProject,
  workerlessShootSpec,
} from "../../src/dev/gardener-garden-objects.ts";
import { SimulatedGardenlet } from "../../src/dev/gardener-simulated-gardenlet.ts";
import { GARDENER_KEYS, type Shoot } from "../../src/providers/gardener-shoot.ts";
import {
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  issuedKubeconfig,
} from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { containerToolchain, forbiddenLogLines, kindNetworkGateway } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { kindManagement, REPO_ROOT } from "../support/kind-management.ts";
import { type CustomResource, readCustomObject, writeSecret } from "../support/maybe-absent.ts";

const tools = containerToolchain();
const SYSTEM = "openmcp-engine-system";
const NS = "gardener-from-pod";
const PROJECT = "pod";
const VERSION = "1.34.2";
/** deploy/base's provider name and environment, and the ProviderConfig below. */
const PROFILE = "default.engine.garden";
const ENGINE_PODS = "app.kubernetes.io/name=openmcp-engine";
const management = kindManagement("gpod-management");
const { work } = management;
let garden: Garden | undefined;
let gardenlet: SimulatedGardenlet | undefined;
let gateway: string;
let custom: CustomObjectsApi;
let gardenApi: CustomObjectsApi;
let gardenCore: CoreV1Api;
let projectNamespace: string;

const read = <T>(resource: CustomResource, name: string) => readCustomObject<T>(custom, resource, NS, name);

const shootsOf = async (uid: string) => {
  const list = (await gardenApi.listNamespacedCustomObject({
    ...CORE,
    namespace: projectNamespace,
    plural: "shoots",
  })) as { items: Shoot[] };
  return list.items.filter((s) => s.metadata.annotations?.[GARDENER_KEYS.clusterUidAnnotation] === uid);
};

/** A ServiceAccount in the garden bound to cluster-admin: the garden's robot account for the engine. */
async function gardenRobot(name: string): Promise<void> {
  await gardenCore.createNamespacedServiceAccount({ namespace: "default", body: { metadata: { name } } });
  await garden?.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `engine-${name}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name, namespace: "default" }],
    },
  });
}

/**
 * A kubeconfig for the garden as a Pod of the kind cluster reaches it (the host's gateway on the kind network),
 * authenticated as the robot `name` with a fresh token.
 */
async function robotKubeconfig(name: string): Promise<string> {
  const token = await gardenCore.createNamespacedServiceAccountToken({
    namespace: "default",
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = garden?.kubeConfig.getCurrentCluster();
  const server = garden?.controlPlane.reachableServer;
  if (!cluster || !server || !token.status?.token) throw new Error("no reachable garden or no token issued");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "garden", server, caData: cluster.caData }],
    users: [{ name, token: token.status.token }],
    contexts: [{ name: "garden", cluster: "garden", user: name }],
    currentContext: "garden",
  });
  return kubeConfig.exportConfig();
}

/** Writes Secret `openmcp-engine-system/garden` (created or replaced), where the ProviderConfig points. */
const writeGardenSecret = (kubeconfig: string): Promise<void> =>
  writeSecret(management.kubeConfig.makeApiClient(CoreV1Api), SYSTEM, "garden", { kubeconfig });

interface PodInfo {
  readonly name: string;
  readonly ready: boolean;
  readonly restarts: number;
}

async function enginePods(): Promise<PodInfo[]> {
  const list = JSON.parse(
    await management.kubectl("-n", SYSTEM, "get", "pods", "-l", ENGINE_PODS, "-o", "json"),
  ) as {
    items: Array<{
      metadata: { name: string };
      status?: {
        conditions?: Array<{ type: string; status: string }>;
        containerStatuses?: Array<{ restartCount: number }>;
      };
    }>;
  };
  return list.items.map((pod) => ({
    name: pod.metadata.name,
    ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    restarts: (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
  }));
}

/** Waits until the engine's Deployment has rolled out its Pods. */
const engineRolledOut = () =>
  management.kubectl("-n", SYSTEM, "rollout", "status", "deployment/openmcp-engine", "--timeout=300s");
/** Every log line of the engine Pods (current and previous containers) that says the API server forbade a call. */
const forbiddenLines = () => forbiddenLogLines(management, SYSTEM, "app.kubernetes.io/name=openmcp-engine");

/**
 * `kubectl apply -k` of deploy/base with the image of this tree (by its own tag: `openmcp-engine:dev` may be
 * retagged meanwhile by another test), as a user sets it with `kustomize edit set image`.
 */
async function applyDeployBase(): Promise<void> {
  const directory = join(work, "deploy");
  mkdirSync(directory, { recursive: true });
  const [name, tag] = tools.engineImage.split(":");
  writeFileSync(
    join(directory, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      `  - ${relative(directory, join(REPO_ROOT, "deploy/base"))}`,
      "images:",
      `  - { name: openmcp-engine, newName: ${name}, newTag: ${tag} }`,
    ].join("\n"),
  );
  await management.kubectl("apply", "-k", directory);
}

beforeAll(async () => {
  findGardenerAssets(); // builds gardener-apiserver once per machine (hack/gardener/build.sh)
  custom = management.kubeConfig.makeApiClient(CustomObjectsApi);
  // The kind network exists now; the garden and every Shoot's API server listen on the host's gateway on it.
  gateway = await kindNetworkGateway();
  garden = await startGarden({ reachableAt: gateway });
  gardenApi = garden.kubeConfig.makeApiClient(CustomObjectsApi);
  gardenCore = garden.kubeConfig.makeApiClient(CoreV1Api);
  await applyCloudProfile(garden.kubeConfig, "local", [{ version: VERSION, classification: "supported" }]);
  projectNamespace = await createProject(garden.kubeConfig, PROJECT);
  gardenlet = new SimulatedGardenlet({ kubeConfig: garden.kubeConfig, reachableAt: gateway });
}, 1_800_000);

afterAll(async () => {
  await gardenlet?.stop();
  await garden?.stop();
}, 300_000);

describe("the gardener backend in a Pod of a kind cluster", { timeout: 600_000 }, () => {
  it("deploy/base, a ProviderConfig naming gardener, the garden in a Secret: a Shoot for a Cluster, Ready, and a token AccessRequest granted through it", async () => {
    const started = performance.now();
    await applyDeployBase();
    await gardenRobot("robot-a");
    await writeGardenSecret(await robotKubeconfig("robot-a"));
    await engineRolledOut();
    await management.kubectl("create", "namespace", NS);
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({
        name: "garden",
        backend: "gardener",
        providerRef: { name: "engine" },
        settings: {
          kubeconfigSecretRef: { namespace: SYSTEM, name: "garden" },
          project: PROJECT,
          shootTemplate: { spec: workerlessShootSpec("local") },
        },
      }),
    });
    // The profile comes from the garden's CloudProfile: the Pod has read the Secret and reached the garden.
    const profile = await eventually(
      () =>
        custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: PROFILE }) as Promise<{
          spec: { supportedVersions: { version: string }[] };
        }>,
      { what: `ClusterProfile ${PROFILE}`, timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect(profile.spec.supportedVersions.map((v) => v.version)).toEqual([VERSION]);

    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({ name: "first", namespace: NS, profile: PROFILE, tenancy: "Exclusive" }),
    });
    const cluster = await eventually(
      async () =>
        satisfying(await read<Cluster>(RESOURCES.Cluster, "first"), (c) => c?.status?.phase === "Ready"),
      { what: `Cluster ${NS}/first Ready`, timeoutMs: 240_000, intervalMs: 1_000 },
    );
    const [shoot, ...others] = await shootsOf(cluster?.metadata.uid ?? "");
    expect(others).toEqual([]);
    // Made by the Pod with the robot's credential from the Secret, and made Ready by the simulated gardenlet.
    expect(shoot?.metadata.annotations?.["gardener.cloud/created-by"]).toBe(
      "system:serviceaccount:default:robot-a",
    );
    expect(gardenlet?.started).toBe(1);
    expect(cluster?.status?.endpoints?.[0]?.url).toMatch(new RegExp(`^https://${gateway}:\\d+$`));
    console.log(
      `gardener from a Pod: Cluster Ready ${Math.round(performance.now() - started)} ms after kubectl apply -k (Shoot ${projectNamespace}/${shoot?.metadata.name}, API server ${cluster?.status?.endpoints?.[0]?.url})`,
    );

    await createAccessRequest(custom, NS, "token", configMapTokenRequest({ name: "first", namespace: NS }));
    await accessGranted(custom, NS, "token", { timeoutMs: 120_000, intervalMs: 1_000 });
    const { text, kubeConfig: access } = await issuedKubeconfig(
      management.kubeConfig.makeApiClient(CoreV1Api),
      NS,
      "token.kubeconfig",
    );
    expect(text).not.toContain("client-key-data"); // a token of its own, not Gardener's admin certificate
    // The Shoot's API server as Gardener advertises it: the host's gateway on the kind network.
    expect(access.getCurrentCluster()?.server).toBe(cluster?.status?.endpoints?.[0]?.url);
    await expectConfigMapAccessOnly(access); // from the host

    // From a Pod of the management cluster too: the engine's own container asks with the granted token.
    const [pod] = await enginePods();
    const probe = [
      "const https = require('node:https');",
      "const [server, ca, token] = process.argv.slice(1);",
      "const get = (path) => new Promise((done) => https.get(server + path, { ca: Buffer.from(ca, 'base64'), headers: { authorization: 'Bearer ' + token } }, (r) => { r.resume(); done(r.statusCode); }).on('error', (e) => done(e.code)));",
      "Promise.all(['/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/secrets'].map(get)).then((s) => console.log(JSON.stringify(s)));",
    ].join(" ");
    const fromPod = await management.kubectl(
      "-n",
      SYSTEM,
      "exec",
      pod?.name ?? "",
      "--",
      "node",
      "-e",
      probe,
      access.getCurrentCluster()?.server ?? "",
      access.getCurrentCluster()?.caData ?? "",
      access.getCurrentUser()?.token ?? "",
    );
    expect(JSON.parse(fromPod)).toEqual([200, 403]);
    expect(await forbiddenLines()).toEqual([]);
  });

  it("new Pods with empty state folders (as when rescheduled) find the Shoot: the Cluster stays Ready, another AccessRequest is granted", async () => {
    const old = (await enginePods()).map((p) => p.name);
    await management.kubectl("-n", SYSTEM, "delete", "pods", "-l", ENGINE_PODS, "--wait=true");
    await engineRolledOut();
    const leader = await eventually(
      async () =>
        satisfying(
          (
            await management.kubectl(
              "-n",
              SYSTEM,
              "get",
              "lease",
              "engine.engine.openmcp.cloud",
              "-o",
              "jsonpath={.spec.holderIdentity}",
            )
          ).replace(/_[^_]*$/, ""),
          (holder) => holder !== "" && !old.includes(holder),
        ),
      { what: "a new Pod leading", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    await createAccessRequest(
      custom,
      NS,
      "after-move",
      configMapTokenRequest({ name: "first", namespace: NS }),
    );
    await accessGranted(custom, NS, "after-move", {
      what: `AccessRequest after-move Granted by the new leader ${leader}`,
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
    expect((await read<Cluster>(RESOURCES.Cluster, "first"))?.status?.phase).toBe("Ready");
    expect(gardenlet?.started).toBe(1); // no second Shoot
    await custom.deleteNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      name: "after-move",
    });
  });

  it("uses a rotated garden Secret from its next call on, with no restart: the old robot revoked, another AccessRequest is granted", async () => {
    const before = await enginePods();
    await gardenRobot("robot-b");
    await writeGardenSecret(await robotKubeconfig("robot-b"));
    // Revoked: robot-a's token no longer authenticates, so whatever the Pod does next, it does as robot-b.
    await gardenCore.deleteNamespacedServiceAccount({ namespace: "default", name: "robot-a" });
    // Granting asks the garden for the Shoot and its adminkubeconfig anew.
    await createAccessRequest(
      custom,
      NS,
      "after-rotation",
      configMapTokenRequest({ name: "first", namespace: NS }),
    );
    await accessGranted(custom, NS, "after-rotation", { timeoutMs: 120_000, intervalMs: 1_000 });
    // Both at once: the last request gone, the engine removes its namespace on the Shoot (a request arriving
    // while that namespace terminates is refused there, 403, until it is gone).
    for (const name of ["token", "after-rotation"]) {
      await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name });
    }
    for (const name of ["token", "after-rotation"]) {
      await eventually(
        async () => satisfying(await read<AccessRequest>(RESOURCES.AccessRequest, name), (r) => !r),
        {
          what: `AccessRequest ${name} gone`,
          timeoutMs: 120_000,
          intervalMs: 1_000,
        },
      );
    }
    const after = await enginePods();
    expect(after.map((p) => [p.name, p.restarts])).toEqual(before.map((p) => [p.name, 0]));
    expect(await forbiddenLines()).toEqual([]);
  });

  it("a Cluster deleted while no engine runs: new Pods with empty state folders delete its Shoot, then let the Cluster go", async () => {
    const uid = (await read<Cluster>(RESOURCES.Cluster, "first"))?.metadata.uid ?? "";
    await management.kubectl("-n", SYSTEM, "scale", "deployment/openmcp-engine", "--replicas=0");
    await management.kubectl(
      "-n",
      SYSTEM,
      "wait",
      "--for=delete",
      "pod",
      "-l",
      ENGINE_PODS,
      "--timeout=120s",
    );
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "first" });
    await management.kubectl("-n", SYSTEM, "scale", "deployment/openmcp-engine", "--replicas=2");
    await eventually(
      async () =>
        satisfying(
          { cluster: await read<Cluster>(RESOURCES.Cluster, "first"), shoots: await shootsOf(uid) },
          (s) => s.cluster === undefined && s.shoots.length === 0,
        ),
      { what: "Cluster first and its Shoot gone", timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(gardenlet?.controlPlanes).toBe(0);
    expect(await forbiddenLines()).toEqual([]);
  });
});
