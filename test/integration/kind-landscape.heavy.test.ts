/**
 * openMCP's local landscape with the engine as its kind ClusterProvider, as openMCP's operator deploys one: a
 * kind platform cluster whose node has the host's Docker socket mounted; the engine's init Job, then a
 * two-replica Deployment with the operator's flags and environment, the socket as a `hostPath` volume and no
 * securityContext, and no `--backend` (the ProviderConfig says `kind`). The platform kind cluster is described
 * by a Cluster and adopted; a new Cluster becomes a real sibling kind cluster made from the Pod; a token
 * AccessRequest's kubeconfig works from a Pod of the platform cluster (the internal endpoint) and from the
 * host (the local-access URL); the leader's Pod deleted mid-create still gives one kind cluster; deleting the
 * Cluster removes the sibling's container and leaves the platform.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { ANNOTATIONS, RESOURCES } from "../../src/api/constants.ts";
import { KIND_NAME_ANNOTATION, kindClusterName } from "../../src/providers/kind.ts";
import { configMapTokenRequest, expectConfigMapAccessOnly } from "../support/access-proofs.ts";
import { aCluster, anAccessRequest, aProviderConfig } from "../support/builders.ts";
import {
  containersNamed,
  containerToolchain,
  createKindCluster,
  docker,
  type TestKindCluster,
} from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";

const tools = containerToolchain();
const PLATFORM = "omc-landscape";
const PROVIDER = "kind";
const SYSTEM = `cp-${PROVIDER}`;
const NS = "landscape";
const PROFILE = `openmcp.${PROVIDER}.kind`;
const IMAGE = "openmcp-engine:dev";
/**
 * The engine's state folder, at the same path on the Docker host, in the platform node and in the Pod: kind
 * mounts each cluster's `authn/` folder (OIDC trust) into its node from there, a path the Docker host resolves.
 */
const STATE = mkdtempSync(join(tmpdir(), "omc-landscape-state-"));
const work = mkdtempSync(join(tmpdir(), "kind-landscape-"));
let platform: TestKindCluster;
/** The kind clusters the engine makes for this test's Clusters. */
const made: string[] = [];
let custom: CustomObjectsApi;

const read = async <T>(resource: (typeof RESOURCES)[keyof typeof RESOURCES], name: string) => {
  try {
    return (await custom.getNamespacedCustomObject({ ...resource, namespace: NS, name })) as T;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
};
const clusterReady = (name: string) =>
  eventually(
    async () => satisfying(await read<Cluster>(RESOURCES.Cluster, name), (c) => c?.status?.phase === "Ready"),
    {
      what: `Cluster ${NS}/${name} Ready`,
      timeoutMs: 420_000,
      intervalMs: 1_000,
    },
  ) as Promise<Cluster>;

/** Every log line of the provider's Pods that says the API server forbade a call. */
async function forbiddenLines(): Promise<string[]> {
  const logs = await platform
    .kubectl(
      "-n",
      SYSTEM,
      "logs",
      "-l",
      `app.kubernetes.io/instance=${PROVIDER}`,
      "--all-containers",
      "--tail=-1",
    )
    .catch(() => "");
  return logs.split("\n").filter((line) => /forbidden|"code":403/i.test(line));
}

/** The provider as openMCP's operator deploys a ClusterProvider whose `extraVolumes` mount the host's Docker socket. */
function providerManifests(): unknown[] {
  const env = [
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
    { name: "POD_SERVICE_ACCOUNT_NAME", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
    { name: "OPENMCP_ENGINE_STATE_DIR", value: STATE },
  ];
  const volumes = [
    { name: "docker", hostPath: { path: "/var/run/host-docker.sock", type: "Socket" } },
    { name: "state", hostPath: { path: STATE, type: "Directory" } },
  ];
  const volumeMounts = [
    { name: "docker", mountPath: "/var/run/docker.sock" },
    { name: "state", mountPath: STATE },
  ];
  const flags = ["--environment=openmcp", "--verbosity=INFO", `--provider-name=${PROVIDER}`];
  const labels = { "app.kubernetes.io/instance": PROVIDER, "app.kubernetes.io/component": "controller" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: SYSTEM } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    ...[PROVIDER, `${PROVIDER}-init`].flatMap((account) => [
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: account, namespace: SYSTEM } },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: `${SYSTEM}:${account}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: account, namespace: SYSTEM }],
      },
    ]),
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: `${PROVIDER}-init`, namespace: SYSTEM },
      spec: {
        backoffLimit: 4,
        template: {
          spec: {
            serviceAccountName: `${PROVIDER}-init`,
            restartPolicy: "Never",
            containers: [
              { name: "init", image: IMAGE, imagePullPolicy: "IfNotPresent", args: ["init", ...flags], env },
            ],
          },
        },
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: PROVIDER, namespace: SYSTEM },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: PROVIDER,
            containers: [
              {
                name: PROVIDER,
                image: IMAGE,
                imagePullPolicy: "IfNotPresent",
                args: [
                  "run",
                  ...flags,
                  "--leader-elect=true",
                  "--metrics-bind-address=:8080",
                  "--metrics-secure=false",
                ],
                env,
                volumeMounts,
              },
            ],
            volumes,
          },
        },
      },
    },
  ];
}

beforeAll(async () => {
  // Written by the Pods' uid 1000 through the platform node.
  chmodSync(STATE, 0o777);
  platform = await createKindCluster(PLATFORM, [
    { hostPath: "/var/run/docker.sock", containerPath: "/var/run/host-docker.sock" },
    { hostPath: STATE, containerPath: STATE },
  ]);
  await docker("tag", tools.engineImage, IMAGE);
  await platform.loadImage(IMAGE);
  custom = platform.kubeConfig.makeApiClient(CustomObjectsApi);
}, 900_000);

afterAll(async () => {
  // What the engine made from its Pod goes with the test, passed or failed (its node containers: the engine
  // that would delete them goes with the platform); then the platform.
  for (const name of made) {
    for (const container of await containersNamed(name).catch(() => [] as string[]))
      await docker("rm", "-f", "-v", container).catch(() => undefined);
  }
  await platform?.delete();
  rmSync(work, { recursive: true, force: true });
  rmSync(STATE, { recursive: true, force: true });
}, 300_000);

describe("openMCP's kind landscape, the engine its kind ClusterProvider", { timeout: 900_000 }, () => {
  it("deploys as the operator does, with the Docker socket: the kind ProviderConfig offers the node images the host holds", async () => {
    mkdirSync(work, { recursive: true });
    writeFileSync(
      join(work, "provider.json"),
      JSON.stringify({ apiVersion: "v1", kind: "List", items: providerManifests() }),
    );
    await platform.kubectl("apply", "-f", join(work, "provider.json"));
    await platform.kubectl(
      "-n",
      SYSTEM,
      "wait",
      "--for=condition=complete",
      `job/${PROVIDER}-init`,
      "--timeout=300s",
    );
    await platform.kubectl("-n", SYSTEM, "rollout", "status", `deployment/${PROVIDER}`, "--timeout=300s");
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kind", backend: "kind", providerRef: { name: PROVIDER } }),
    });
    const profile = await eventually(
      async () =>
        (await custom.getClusterCustomObject({
          ...RESOURCES.ClusterProfile,
          name: PROFILE,
        })) as ClusterProfile,
      { what: `ClusterProfile ${PROFILE}`, timeoutMs: 120_000 },
    );
    expect(profile.spec.supportedVersions?.map((v) => v.version)).toContain(tools.kubernetesVersion);
  });

  it("adopts the running platform kind cluster its Cluster names, creating nothing", async () => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({
        name: "platform",
        namespace: NS,
        profile: PROFILE,
        version: tools.kubernetesVersion,
        annotations: { [KIND_NAME_ANNOTATION]: PLATFORM },
      }),
    });
    const cluster = await clusterReady("platform");
    expect(cluster.status?.endpoints?.find((e) => e.name === "apiserver-internal")?.url).toBe(
      `https://${PLATFORM}-control-plane:6443`,
    );
    expect(await containersNamed(PLATFORM)).toEqual([`${PLATFORM}-control-plane`]);
  });

  let mcp: Cluster;
  it("makes a new Cluster a real sibling kind cluster from the Pod, publishing both endpoints", async () => {
    const started = performance.now();
    const created = (await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({
        name: "mcp",
        namespace: NS,
        profile: PROFILE,
        tenancy: "Exclusive",
        version: tools.kubernetesVersion,
      }),
    })) as Cluster;
    made.push(kindClusterName(created.metadata.uid ?? ""));
    mcp = await clusterReady("mcp");
    console.log(
      `kind landscape: a kind cluster made from the engine's Pod Ready in ${Math.round(performance.now() - started)} ms`,
    );
    const name = kindClusterName(mcp.metadata.uid ?? "");
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    expect(mcp.status?.endpoints?.map((e) => e.name)).toEqual(["apiserver-external", "apiserver-internal"]);
  });

  it("gives one kind cluster when the leader's Pod is deleted mid-create: the new leader starts the create over", async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({
        name: "killed",
        namespace: NS,
        profile: PROFILE,
        tenancy: "Exclusive",
        version: tools.kubernetesVersion,
      }),
    })) as Cluster;
    const name = kindClusterName(created.metadata.uid ?? "");
    made.push(name);
    // The create runs: its node container exists.
    await eventually(async () => expect(await containersNamed(name)).toEqual([`${name}-control-plane`]), {
      what: `kind's node container of ${name}`,
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    const holder = await platform.kubectl(
      "-n",
      SYSTEM,
      "get",
      "lease",
      `${PROVIDER}.engine.openmcp.cloud`,
      "-o",
      "jsonpath={.spec.holderIdentity}",
    );
    const leader = holder.replace(/_[^_]*$/, "");
    await platform.kubectl("-n", SYSTEM, "delete", "pod", leader, "--grace-period=0", "--force");
    const ready = await clusterReady("killed");
    expect(ready.metadata.uid).toBe(created.metadata.uid);
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "killed" });
    await eventually(async () => expect(await containersNamed(name)).toEqual([]), {
      what: `${name} removed with its Cluster`,
      timeoutMs: 180_000,
      intervalMs: 1_000,
    });
  });

  it("grants a token AccessRequest whose kubeconfig does exactly what was asked, from a Pod and from the host", async () => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      body: anAccessRequest({
        name: "mcp",
        namespace: NS,
        ...configMapTokenRequest({ name: "mcp", namespace: NS }),
      }),
    });
    const granted = (await eventually(
      async () =>
        satisfying(
          await read<AccessRequest>(RESOURCES.AccessRequest, "mcp"),
          (r) => r?.status?.phase === "Granted",
        ),
      { what: "AccessRequest mcp Granted", timeoutMs: 180_000, intervalMs: 1_000 },
    )) as AccessRequest;
    const external = mcp.status?.endpoints?.find((e) => e.name === "apiserver-external")?.url;
    expect(granted.metadata.annotations?.[ANNOTATIONS.localAccess]).toBe(external);
    const secretName = granted.status?.secretRef?.name ?? "";
    const secret = await platform.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: NS, name: secretName });
    const text = Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString("utf8");
    expect(text).toContain(`server: https://${kindClusterName(mcp.metadata.uid ?? "")}-control-plane:6443`);

    // From a Pod of the platform cluster: the Secret mounted, the internal endpoint, exactly the asked rights.
    const probe = [
      "const { readFileSync } = require('node:fs');",
      "const { parse } = require('/app/node_modules/yaml');",
      "const k = parse(readFileSync('/access/kubeconfig', 'utf8'));",
      "const server = new URL(k.clusters[0].cluster.server);",
      "const ca = Buffer.from(k.clusters[0].cluster['certificate-authority-data'], 'base64');",
      "const token = k.users[0].user.token;",
      "const get = (path) => new Promise((ok) => require('node:https').get({ host: server.hostname, port: server.port, path, ca, headers: { authorization: 'Bearer ' + token } }, (r) => { r.resume(); ok(r.statusCode); }).on('error', (e) => ok(e.code)));",
      "(async () => console.log(JSON.stringify([await get('/api/v1/namespaces/default/configmaps'), await get('/api/v1/namespaces/default/secrets'), await get('/api/v1/nodes')])))();",
    ].join(" ");
    const job = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "use-access", namespace: NS },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [
              {
                name: "probe",
                image: IMAGE,
                imagePullPolicy: "IfNotPresent",
                command: ["node", "-e", probe],
                volumeMounts: [{ name: "access", mountPath: "/access", readOnly: true }],
              },
            ],
            volumes: [{ name: "access", secret: { secretName } }],
          },
        },
      },
    };
    writeFileSync(join(work, "job.json"), JSON.stringify(job));
    await platform.kubectl("apply", "-f", join(work, "job.json"));
    await platform.kubectl("-n", NS, "wait", "--for=condition=complete", "job/use-access", "--timeout=180s");
    const answers = JSON.parse((await platform.kubectl("-n", NS, "logs", "job/use-access")).trim());
    expect(answers).toEqual([200, 403, 403]);

    // From the host: the same kubeconfig with the local-access URL swapped in.
    const fromHost = new KubeConfig();
    fromHost.loadFromString(text);
    const cluster = fromHost.getCurrentCluster();
    fromHost.clusters = fromHost.clusters.map((c) =>
      c.name === cluster?.name ? { ...c, server: external ?? "" } : c,
    );
    await expectConfigMapAccessOnly(fromHost);
  });

  it("deletes the made kind cluster's container with its Cluster, and leaves the adopted platform running", async () => {
    const name = kindClusterName(mcp.metadata.uid ?? "");
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name: "mcp" });
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "mcp" });
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "platform" });
    await eventually(
      async () => {
        expect(await read<Cluster>(RESOURCES.Cluster, "mcp")).toBeUndefined();
        expect(await read<Cluster>(RESOURCES.Cluster, "platform")).toBeUndefined();
      },
      { what: "both Clusters gone", timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect(await containersNamed(name)).toEqual([]);
    expect(await containersNamed(PLATFORM)).toEqual([`${PLATFORM}-control-plane`]);
    expect(await forbiddenLines()).toEqual([]);
  });
});
