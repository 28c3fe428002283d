/**
 * The engine as an in-cluster controller, for real: its image loaded into a kind management cluster,
 * `kubectl apply -k deploy/base` (two replicas, one leader, probes, metrics through the Service, non-root on a
 * read-only root filesystem, every API call as its own ServiceAccount), failover when the leader's Pod is
 * deleted (no second backend create), `deploy/sharded` splitting the work, and openMCP's deployment contract
 * (an init Job, then the Deployment, with the flags and environment the openMCP operator gives them).
 *
 * The `gardener` backend from those Pods too, as Gardener users run a provider: no backend flag, a ProviderConfig
 * naming `gardener`, the garden's kubeconfig in a Secret. The garden runs on the host as in the other Gardener
 * tests (Gardener's own gardener-apiserver aggregated on a kube-apiserver, a SIMULATED gardenlet making each Shoot
 * a real local control plane), reachable from the kind network at the host's gateway on it. The Pods make a Shoot
 * for a Cluster and grant a token AccessRequest through it; new Pods with empty state folders find it; a rotated
 * garden Secret is used from the next call on, with no restart; deleting the Cluster deletes the Shoot. (One
 * management cluster for both: a kind node and the image loaded into it are the dearest parts of these files.)
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { SHARD_LEASE_LABELS } from "../../src/api/constants/shard-lease.ts";
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
import { ownerOf } from "../../src/runtime/sharding/rendezvous.ts";
import {
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  issuedKubeconfig,
} from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { docker, forbiddenLogLines, kindNetworkGateway } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { kindManagement, REPO_ROOT } from "../support/kind-management.ts";
import { type CustomResource, readCustomObject, writeSecret } from "../support/maybe-absent.ts";

const SYSTEM = "openmcp-engine-system";
const NS = "in-cluster";
const LEASE = "engine.engine.openmcp.cloud";
/** Where the Pods of the journaling overlay keep their shared backend state, on the node. */
const SHARED_STATE = "/var/lib/openmcp-engine-shared";
// deploy/base names the image openmcp-engine:dev.
const management = kindManagement("omc-management", { image: "openmcp-engine:dev" });
const { work } = management;
let custom: CustomObjectsApi;

interface PodInfo {
  readonly name: string;
  readonly ready: boolean;
  readonly deleting: boolean;
  readonly restarts: number;
  /** Why its container last ended (kubelet's reason and exit code), if it restarted. */
  readonly lastEnded?: string;
}

async function enginePods(
  namespace = SYSTEM,
  selector = "app.kubernetes.io/name=openmcp-engine",
): Promise<PodInfo[]> {
  const list = JSON.parse(
    await management.kubectl("-n", namespace, "get", "pods", "-l", selector, "-o", "json"),
  ) as {
    items: Array<{
      metadata: { name: string; deletionTimestamp?: string };
      status?: {
        conditions?: Array<{ type: string; status: string }>;
        containerStatuses?: Array<{
          restartCount: number;
          lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
        }>;
      };
    }>;
  };
  return list.items.map((pod) => ({
    name: pod.metadata.name,
    ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    deleting: pod.metadata.deletionTimestamp !== undefined,
    restarts: (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
    lastEnded: (pod.status?.containerStatuses ?? [])
      .map((c) => c.lastState?.terminated)
      .filter((ended) => ended !== undefined)
      .map((ended) => `${ended.reason} (exit ${ended.exitCode}) at ${ended.finishedAt}`)
      .join(", "),
  }));
}

/** Why each of `pods` that restarted did: kubelet's reason and the last lines its previous container logged. */
async function restartsExplained(pods: readonly PodInfo[], namespace = SYSTEM): Promise<string> {
  const explained = await Promise.all(
    pods
      .filter((pod) => pod.restarts > 0)
      .map(async (pod) => {
        const logs = await management
          .kubectl("-n", namespace, "logs", pod.name, "--previous", "--tail=15")
          .catch((error: Error) => `(no previous logs: ${error.message})`);
        return `${pod.name} restarted ${pod.restarts}×, last ended ${pod.lastEnded}; its previous container's last lines:\n${logs}`;
      }),
  );
  return explained.join("\n");
}

const readyPods = async (count: number, namespace = SYSTEM, selector?: string) =>
  eventually(
    async () =>
      satisfying(
        (await enginePods(namespace, selector)).filter((p) => !p.deleting),
        (pods) => pods.length === count && pods.every((p) => p.ready),
      ),
    { what: `${count} Ready engine Pods in ${namespace}`, timeoutMs: 300_000, intervalMs: 1_000 },
  );

/** The Pod that holds the leader Lease (its identity is `<pod>_<random>`). */
async function leaseHolder(namespace = SYSTEM, lease = LEASE): Promise<string> {
  const identity = await management.kubectl(
    "-n",
    namespace,
    "get",
    "lease",
    lease,
    "-o",
    "jsonpath={.spec.holderIdentity}",
  );
  return identity.replace(/_[^_]*$/, "");
}

const readCluster = (name: string) => readCustomObject<Cluster>(custom, RESOURCES.Cluster, NS, name);

const createCluster = (name: string, profile: string) =>
  custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: aCluster({ name, namespace: NS, profile, tenancy: "Exclusive" }),
  });

const clusterReady = (name: string) =>
  eventually(async () => satisfying(await readCluster(name), (c) => c?.status?.phase === "Ready"), {
    what: `Cluster ${NS}/${name} Ready`,
    timeoutMs: 180_000,
    intervalMs: 500,
  });

/** Every log line of the engine Pods' current containers that says the API server forbade a call. */
const forbiddenLines = (namespace = SYSTEM, selector = "app.kubernetes.io/name=openmcp-engine") =>
  forbiddenLogLines(management, namespace, selector, { previous: false });

/** `kubectl get --raw` through the API server's proxy: what a Prometheus in the cluster would scrape. */
const raw = (path: string) => management.kubectl("get", "--raw", path);

/** The journaling backend's lines, from the node's shared state folder. */
async function journal(): Promise<
  Array<{ pod: string; method: string; cluster: string; phase: string; ok?: boolean }>
> {
  const out = await docker(
    "exec",
    `${management.name}-control-plane`,
    "sh",
    "-c",
    `cat ${SHARED_STATE}/journal/*.jsonl 2>/dev/null || true`,
  );
  return out
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** Writes a kustomization in `folder` on top of `base` (a folder of this repository) and applies it. */
async function applyOverlay(folder: string, base: string, extra: string): Promise<void> {
  const directory = join(work, folder);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  // kustomize reads generator files only from below the kustomization: the module goes beside it.
  copyFileSync(
    join(REPO_ROOT, "test/support/in-image/journaling-backend.mjs"),
    join(directory, "journaling-backend.mjs"),
  );
  writeFileSync(
    join(directory, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      `  - ${relative(directory, join(REPO_ROOT, base))}`,
      extra,
    ].join("\n"),
  );
  await management.kubectl("apply", "-k", directory);
}

/** Applies `base` with the journaling backend on state shared by the Pods (one node), and waits for its rollout. */
const journalingOverlay = async (base: string): Promise<void> => {
  await applyOverlay(
    `journaling-${base.replaceAll("/", "-")}`,
    base,
    [
      "configMapGenerator:",
      "  - name: journaling-backend",
      "    namespace: openmcp-engine-system",
      "    files:",
      "      - journaling-backend.mjs",
      "patches:",
      "  - target: { kind: Deployment, name: openmcp-engine }",
      "    patch: |",
      "      - { op: add, path: /spec/template/spec/containers/0/args/-, value: --backend=/backend/journaling-backend.mjs }",
      `      - { op: add, path: /spec/template/spec/containers/0/args/-, value: --backend-option=journal=/var/lib/openmcp-engine/journal }`,
      "      - { op: add, path: /spec/template/spec/containers/0/args/-, value: --backend-option=provisionDelay=5s }",
      "      - { op: add, path: /spec/template/spec/containers/0/volumeMounts/-, value: { name: backend, mountPath: /backend, readOnly: true } }",
      "      - { op: add, path: /spec/template/spec/volumes/-, value: { name: backend, configMap: { name: journaling-backend } } }",
      `      - { op: replace, path: /spec/template/spec/volumes/0, value: { name: state, hostPath: { path: ${SHARED_STATE}, type: Directory } } }`,
    ].join("\n"),
  );
  await management.kubectl("-n", SYSTEM, "rollout", "status", "deployment/openmcp-engine", "--timeout=300s");
};

/**
 * The gardener backend's part: its namespace, the garden's project and version, and the profile deploy/base's
 * provider name and the ProviderConfig `garden` make.
 */
const GARDEN_NS = "gardener-from-pod";
const PROJECT = "pod";
const VERSION = "1.34.2";
const GARDEN_PROFILE = "default.engine.garden";
const ENGINE_PODS = "app.kubernetes.io/name=openmcp-engine";
let garden: Garden | undefined;
let gardenlet: SimulatedGardenlet | undefined;
let gateway: string;
let gardenApi: CustomObjectsApi;
let gardenCore: CoreV1Api;
let projectNamespace: string;

const readInGarden = <T>(resource: CustomResource, name: string) =>
  readCustomObject<T>(custom, resource, GARDEN_NS, name);

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

/** Waits until the engine's Deployment has rolled out its Pods. */
const engineRolledOut = () =>
  management.kubectl("-n", SYSTEM, "rollout", "status", "deployment/openmcp-engine", "--timeout=300s");
/** Every log line of the engine Pods (current and previous containers) that says the API server forbade a call. */
const gardenForbiddenLines = () => forbiddenLogLines(management, SYSTEM, ENGINE_PODS);

beforeAll(async () => {
  // The shared backend state of the journaling overlay: a folder on the node the non-root Pods may write.
  await docker(
    "exec",
    `${management.name}-control-plane`,
    "sh",
    "-c",
    `mkdir -p ${SHARED_STATE} && chown 1000:1000 ${SHARED_STATE}`,
  );
  custom = management.kubeConfig.makeApiClient(CustomObjectsApi);
}, 900_000);

describe("in a kind management cluster", { timeout: 900_000 }, () => {
  it("kubectl apply -k deploy/base: two replicas Ready, one leader, a Cluster Ready, no call forbidden", async () => {
    const started = performance.now();
    await management.kubectl("apply", "-k", join(REPO_ROOT, "deploy/base"));
    const pods = await readyPods(2);
    console.log(
      `deploy/base: 2 replicas Ready ${Math.round(performance.now() - started)} ms after kubectl apply -k`,
    );
    const leader = await eventually(leaseHolder, { what: "a leader", timeoutMs: 60_000 });
    expect(pods.map((p) => p.name)).toContain(leader);

    await management.kubectl("create", "namespace", NS);
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "sim", providerRef: { name: "engine" } }),
    });
    await eventually(
      () => custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: "default.engine.sim" }),
      {
        what: "ClusterProfile default.engine.sim",
        timeoutMs: 60_000,
      },
    );
    await createCluster("first", "default.engine.sim");
    await clusterReady("first");
    expect(await forbiddenLines()).toEqual([]);
  });

  it("serves /readyz on every replica and /metrics through its Service", async () => {
    for (const pod of await enginePods()) {
      expect(await raw(`/api/v1/namespaces/${SYSTEM}/pods/${pod.name}:8081/proxy/readyz`)).toMatch(/ok/i);
    }
    // The Service picks either replica: the standby has no reconciles yet, but every metric is declared.
    const metrics = await raw(
      `/api/v1/namespaces/${SYSTEM}/services/openmcp-engine-metrics:metrics/proxy/metrics`,
    );
    expect(metrics).toMatch(/^# TYPE controller_runtime_reconcile_total counter$/m);
    expect(metrics).toMatch(/^leader_election_master_status\{/m);
    expect(metrics).toMatch(/^openmcp_engine_informer_cache_objects\{/m);
    expect(metrics).toMatch(/^process_resident_memory_bytes /m);
  });

  it("runs as uid 1000 on a read-only root filesystem, writing only its volumes", async () => {
    const [pod] = await enginePods();
    const probe = [
      "const fs = require('node:fs');",
      "const tryWrite = (path) => { try { fs.writeFileSync(path, 'x'); fs.rmSync(path); return 'ok'; } catch (e) { return e.code; } };",
      "console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), root: tryWrite('/app/probe'), etc: tryWrite('/etc/probe'), state: tryWrite('/var/lib/openmcp-engine/probe'), tmp: tryWrite('/tmp/probe') }));",
    ].join(" ");
    const out = await management.kubectl("-n", SYSTEM, "exec", pod?.name ?? "", "--", "node", "-e", probe);
    expect(JSON.parse(out)).toEqual({
      uid: 1000,
      gid: 1000,
      root: "EROFS",
      etc: "EROFS",
      state: "ok",
      tmp: "ok",
    });
  });
});

describe("the gardener backend from the same Pods: a ProviderConfig naming gardener, the garden in a Secret", {
  timeout: 600_000,
}, () => {
  beforeAll(async () => {
    findGardenerAssets(); // builds gardener-apiserver once per machine (hack/gardener/build.sh)
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
    // The steps after this block swap the backend for the journaling one: the garden's config goes first.
    await custom
      ?.deleteClusterCustomObject({ ...RESOURCES.ProviderConfig, name: "garden" })
      .catch(() => undefined);
    await gardenlet?.stop();
    await garden?.stop();
  }, 300_000);

  it("a Shoot for a Cluster, Ready, and a token AccessRequest granted through it, with no backend flag", async () => {
    const started = performance.now();
    await gardenRobot("robot-a");
    await writeGardenSecret(await robotKubeconfig("robot-a"));
    await engineRolledOut();
    await management.kubectl("create", "namespace", GARDEN_NS);
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
        custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: GARDEN_PROFILE }) as Promise<{
          spec: { supportedVersions: { version: string }[] };
        }>,
      { what: `ClusterProfile ${GARDEN_PROFILE}`, timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect(profile.spec.supportedVersions.map((v) => v.version)).toEqual([VERSION]);

    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: GARDEN_NS,
      body: aCluster({ name: "first", namespace: GARDEN_NS, profile: GARDEN_PROFILE, tenancy: "Exclusive" }),
    });
    const cluster = await eventually(
      async () =>
        satisfying(
          await readInGarden<Cluster>(RESOURCES.Cluster, "first"),
          (c) => c?.status?.phase === "Ready",
        ),
      { what: `Cluster ${GARDEN_NS}/first Ready`, timeoutMs: 240_000, intervalMs: 1_000 },
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
      `gardener from a Pod: Cluster Ready ${Math.round(performance.now() - started)} ms after the garden Secret (Shoot ${projectNamespace}/${shoot?.metadata.name}, API server ${cluster?.status?.endpoints?.[0]?.url})`,
    );

    await createAccessRequest(
      custom,
      GARDEN_NS,
      "token",
      configMapTokenRequest({ name: "first", namespace: GARDEN_NS }),
    );
    await accessGranted(custom, GARDEN_NS, "token", { timeoutMs: 120_000, intervalMs: 1_000 });
    const { text, kubeConfig: access } = await issuedKubeconfig(
      management.kubeConfig.makeApiClient(CoreV1Api),
      GARDEN_NS,
      "token.kubeconfig",
    );
    expect(text).not.toContain("client-key-data"); // a token of its own, not Gardener's admin certificate
    // The Shoot's API server as Gardener advertises it: the host's gateway on the kind network.
    expect(access.getCurrentCluster()?.server).toBe(cluster?.status?.endpoints?.[0]?.url);
    await expectConfigMapAccessOnly(access); // from the host

    // From a Pod of the management cluster too: the engine's own container asks with the granted token.
    const [pod] = await enginePods(SYSTEM, ENGINE_PODS);
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
    expect(await gardenForbiddenLines()).toEqual([]);
  });

  it("new Pods with empty state folders (as when rescheduled) find the Shoot: the Cluster stays Ready, another AccessRequest is granted", async () => {
    const old = (await enginePods(SYSTEM, ENGINE_PODS)).map((p) => p.name);
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
      GARDEN_NS,
      "after-move",
      configMapTokenRequest({ name: "first", namespace: GARDEN_NS }),
    );
    await accessGranted(custom, GARDEN_NS, "after-move", {
      what: `AccessRequest after-move Granted by the new leader ${leader}`,
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
    expect((await readInGarden<Cluster>(RESOURCES.Cluster, "first"))?.status?.phase).toBe("Ready");
    expect(gardenlet?.started).toBe(1); // no second Shoot
    await custom.deleteNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: GARDEN_NS,
      name: "after-move",
    });
  });

  it("uses a rotated garden Secret from its next call on, with no restart: the old robot revoked, another AccessRequest is granted", async () => {
    const before = await enginePods(SYSTEM, ENGINE_PODS);
    await gardenRobot("robot-b");
    await writeGardenSecret(await robotKubeconfig("robot-b"));
    // Revoked: robot-a's token no longer authenticates, so whatever the Pod does next, it does as robot-b.
    await gardenCore.deleteNamespacedServiceAccount({ namespace: "default", name: "robot-a" });
    // Granting asks the garden for the Shoot and its adminkubeconfig anew.
    await createAccessRequest(
      custom,
      GARDEN_NS,
      "after-rotation",
      configMapTokenRequest({ name: "first", namespace: GARDEN_NS }),
    );
    await accessGranted(custom, GARDEN_NS, "after-rotation", { timeoutMs: 120_000, intervalMs: 1_000 });
    // Both at once: the last request gone, the engine removes its namespace on the Shoot (a request arriving
    // while that namespace terminates is refused there, 403, until it is gone).
    for (const name of ["token", "after-rotation"]) {
      await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: GARDEN_NS, name });
    }
    for (const name of ["token", "after-rotation"]) {
      await eventually(
        async () => satisfying(await readInGarden<AccessRequest>(RESOURCES.AccessRequest, name), (r) => !r),
        {
          what: `AccessRequest ${name} gone`,
          timeoutMs: 120_000,
          intervalMs: 1_000,
        },
      );
    }
    const after = await enginePods(SYSTEM, ENGINE_PODS);
    // No restart through the rotation; restarts before it (a probe on a busy node) are the earlier tests' to explain.
    expect(
      after.map((p) => [p.name, p.restarts]),
      await restartsExplained(after),
    ).toEqual(before.map((p) => [p.name, p.restarts]));
    expect(await gardenForbiddenLines()).toEqual([]);
  });

  it("a Cluster deleted while no engine runs: new Pods with empty state folders delete its Shoot, then let the Cluster go", async () => {
    const uid = (await readInGarden<Cluster>(RESOURCES.Cluster, "first"))?.metadata.uid ?? "";
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
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: GARDEN_NS, name: "first" });
    await management.kubectl("-n", SYSTEM, "scale", "deployment/openmcp-engine", "--replicas=2");
    await eventually(
      async () =>
        satisfying(
          { cluster: await readInGarden<Cluster>(RESOURCES.Cluster, "first"), shoots: await shootsOf(uid) },
          (s) => s.cluster === undefined && s.shoots.length === 0,
        ),
      { what: "Cluster first and its Shoot gone", timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(gardenlet?.controlPlanes).toBe(0);
    expect(await gardenForbiddenLines()).toEqual([]);
  });
});

describe("in a kind management cluster, its deployment changed", { timeout: 900_000 }, () => {
  it("fails over when the leader's Pod is deleted: the other replica leads, a Cluster made meanwhile goes Ready, one create each", async () => {
    await journalingOverlay("deploy/base");
    const pods = await readyPods(2);
    const leader = await eventually(
      async () => satisfying(await leaseHolder(), (holder) => pods.some((p) => p.name === holder)),
      { what: "a leader among the new Pods", timeoutMs: 120_000 },
    );
    await createCluster("before", "default.engine.sim");
    await clusterReady("before");

    const standby = (await enginePods()).filter((p) => !p.deleting && p.name !== leader).map((p) => p.name);
    const deleted = performance.now();
    await management.kubectl("-n", SYSTEM, "delete", "pod", leader, "--wait=false");
    await createCluster("during", "default.engine.sim");
    const successor = await eventually(
      async () => satisfying(await leaseHolder(), (holder) => holder !== leader && holder !== ""),
      { what: "another Pod holding the Lease", timeoutMs: 120_000, intervalMs: 200 },
    );
    console.log(
      `failover: ${successor} leads ${Math.round(performance.now() - deleted)} ms after the leader's Pod was deleted`,
    );
    // The warm standby, not a Pod started to replace the leader.
    expect(standby, JSON.stringify({ pods, leader, standby })).toContain(successor);
    await clusterReady("during");

    const calls = await journal();
    const creates = new Map<string, Set<string>>();
    for (const call of calls.filter((c) => c.method === "create" && c.phase === "end" && c.ok)) {
      creates.set(call.cluster, new Set([...(creates.get(call.cluster) ?? []), call.pod]));
    }
    const uids = await Promise.all(
      ["before", "during"].map(async (n) => (await readCluster(n))?.metadata.uid ?? ""),
    );
    const createCalls = (uid: string) =>
      calls.filter((c) => c.method === "create" && c.phase === "start" && c.cluster === uid);
    for (const uid of uids) expect(createCalls(uid)).toHaveLength(1);
    // Either Pod may have made it: the deleted leader finishes the reconciles it had begun before it lets go.
    expect([...(creates.get(uids[1] ?? "") ?? [])]).toHaveLength(1);
    expect(await forbiddenLines()).toEqual([]);
  });

  it("deploy/sharded: three replicas split the Clusters; a deleted Pod's share moves to the others", async () => {
    await journalingOverlay("deploy/sharded");
    await readyPods(3);
    for (let i = 0; i < 12; i++) await createCluster(`shard-${i}`, "default.engine.sim");
    for (let i = 0; i < 12; i++) await clusterReady(`shard-${i}`);
    const clusters = (await custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS })) as {
      items: Array<{ metadata: { name: string } }>;
    };
    const keys = clusters.items.map((cluster) => `${NS}/${cluster.metadata.name}`);
    /**
     * What each live replica says it owns (its metric), beside what rendezvous hashing gives it among the
     * live replicas' membership Leases (identity `<pod>_<random>`). Hashing may give a replica nothing.
     */
    const shares = async () => {
      const live = (await enginePods()).filter((p) => !p.deleting).map((p) => p.name);
      const podOf = (identity: string) => identity.split("_")[0] ?? "";
      const leases = JSON.parse(
        await management.kubectl(
          "-n",
          SYSTEM,
          "get",
          "leases",
          "-l",
          SHARD_LEASE_LABELS.shardRing,
          "-o",
          "json",
        ),
      ) as { items: Array<{ spec?: { holderIdentity?: string } }> };
      const members = leases.items
        .map((lease) => lease.spec?.holderIdentity ?? "")
        .filter((identity) => live.includes(podOf(identity)));
      const owned: Record<string, number> = {};
      for (const pod of live) {
        const metrics = await raw(`/api/v1/namespaces/${SYSTEM}/pods/${pod}:8080/proxy/metrics`);
        const line = metrics
          .split("\n")
          .find((l) => l.startsWith('openmcp_engine_shard_owned_objects{controller="cluster"'));
        owned[pod] = Number(line?.split(" ").at(-1) ?? Number.NaN);
      }
      const hashed: Record<string, number> = {};
      for (const member of members)
        hashed[podOf(member)] = keys.filter((k) => ownerOf(k, members) === member).length;
      return { owned, hashed };
    };
    /** Three live replicas, each owning what hashing gives it, so together every Cluster once; not all on one. */
    const split = ({ owned, hashed }: { owned: Record<string, number>; hashed: Record<string, number> }) =>
      Object.keys(owned).length === 3 &&
      isDeepStrictEqual(owned, hashed) &&
      Object.values(owned).filter((n) => n > 0).length >= 2;
    const before = await eventually(async () => satisfying(await shares(), split), {
      what: `three replicas splitting the ${keys.length} Clusters`,
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
    const [victim = ""] = Object.keys(before.owned);
    await management.kubectl("-n", SYSTEM, "delete", "pod", victim, "--wait=true");
    const after = await eventually(
      async () => satisfying(await shares(), (now) => !(victim in now.owned) && split(now)),
      { what: `the Clusters of ${victim} owned by the live replicas`, timeoutMs: 180_000, intervalMs: 1_000 },
    );
    console.log(
      `sharded: owned before ${JSON.stringify(before.owned)}, after deleting ${victim}: ${JSON.stringify(after.owned)}`,
    );
    await createCluster("after-shard-loss", "default.engine.sim");
    await clusterReady("after-shard-loss");
    expect(await forbiddenLines()).toEqual([]);
  });

  it("deploys as the openMCP operator does: an init Job with its flags, then run with --environment, --provider-name, --verbosity", async () => {
    // One provider at a time here: the deploy/base engine goes first.
    await management.kubectl("-n", SYSTEM, "delete", "deployment", "openmcp-engine", "--wait=true");
    const provider = "engine-cp";
    const namespace = `cp-${provider}`;
    const image = "openmcp-engine:dev";
    const env = [
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "OPENMCP_PROVIDER_NAME", value: provider },
      { name: "OPENMCP_PLATFORM_CLUSTER_NAMESPACE", value: namespace },
    ];
    const manifests = [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      ...[provider, `${provider}-init`].flatMap((account) => [
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: account, namespace } },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: `${namespace}:${account}` },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: account, namespace }],
        },
      ]),
      {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: `${provider}-init`, namespace },
        spec: {
          backoffLimit: 4,
          template: {
            spec: {
              serviceAccountName: `${provider}-init`,
              restartPolicy: "Never",
              containers: [
                {
                  name: "init",
                  image,
                  imagePullPolicy: "IfNotPresent",
                  args: ["init", "--environment=openmcp", "--verbosity=INFO", `--provider-name=${provider}`],
                  env,
                },
              ],
            },
          },
        },
      },
    ];
    await management.apply("openmcp-init", manifests);
    await management.jobComplete(namespace, `${provider}-init`);
    const initLog = await management.kubectl("-n", namespace, "logs", `job/${provider}-init`);
    expect(initLog).not.toMatch(/"level":"error"/);

    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: provider, namespace },
      spec: {
        replicas: 2,
        selector: {
          matchLabels: {
            "app.kubernetes.io/instance": provider,
            "app.kubernetes.io/component": "controller",
          },
        },
        template: {
          metadata: {
            labels: { "app.kubernetes.io/instance": provider, "app.kubernetes.io/component": "controller" },
          },
          spec: {
            serviceAccountName: provider,
            containers: [
              {
                name: provider,
                image,
                imagePullPolicy: "IfNotPresent",
                // Exactly what the operator appends for two replicas with metrics on.
                args: [
                  "run",
                  "--environment=openmcp",
                  "--verbosity=INFO",
                  `--provider-name=${provider}`,
                  "--leader-elect=true",
                  "--metrics-bind-address=:8080",
                  "--metrics-secure=false",
                ],
                env,
                ports: [{ name: "metrics", containerPort: 8080 }],
              },
            ],
          },
        },
      },
    };
    await management.apply("openmcp-run", [deployment]);
    const selector = `app.kubernetes.io/instance=${provider}`;
    const pods = await readyPods(2, namespace, selector);
    const leader = await eventually(() => leaseHolder(namespace, `${provider}.engine.openmcp.cloud`), {
      what: `a leader in ${namespace}`,
      timeoutMs: 60_000,
    });
    expect(pods.map((p) => p.name)).toContain(leader);
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "cp-sim", providerRef: { name: provider } }),
    });
    await eventually(
      () =>
        custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: `openmcp.${provider}.cp-sim` }),
      { what: `ClusterProfile openmcp.${provider}.cp-sim`, timeoutMs: 60_000 },
    );
    await createCluster("from-openmcp", `openmcp.${provider}.cp-sim`);
    await clusterReady("from-openmcp");
    expect(await forbiddenLines(namespace, selector)).toEqual([]);
  });
});
