/**
 * Cluster API the clusterctl way, on real containers: a kind management cluster (the host's Docker socket and
 * the engine's state folder mounted into its node) into which both providers are installed as `clusterctl init
 * --infrastructure openmcp-engine` installs them, with clusterctl's processing done by test/support/clusterctl.ts
 * (variables, target namespace, labels, order), since clusterctl cannot fetch anything here:
 * - the core provider: the release's core-components.yaml and the manager image it names, both made offline
 *   from Cluster API v1.14.2's source and the manager binary this project builds (hack/capi/core-components.sh),
 *   the manager running as a Pod with its webhooks (defaulting, validation, CRD conversion) served;
 * - the engine: `openmcp-engine capi-components`, its `manager` Deployment running the engine's image with
 *   `--capi` under the components' own RBAC (no cluster-admin), plus the Docker-socket mode a kind backend needs
 *   (dockerSocketMode below: the socket, its group, the state folder at the Docker host's path).
 *
 * Webhook certificates: clusterctl installs cert-manager, which cannot be installed offline. The test does what
 * cert-manager would (test/support/webhook-certificates.ts): for the components' Certificate a real CA and serving
 * certificate for the webhook Service's DNS names, in the Secret the Certificate names, and the CA as `caBundle`
 * of the webhook configurations and the CRDs' conversion webhooks (cainjector's part). Every webhook call and
 * every conversion the API server makes to Cluster API's manager goes through that TLS.
 *
 * Then a CAPI Cluster whose controlPlaneRef is an EngineControlPlane on the `kind` backend becomes Available as
 * the core manager computes it; its `<cluster>-kubeconfig` Secret reaches the new kind cluster from a Pod of
 * the management cluster and from the host; deleting the Cluster removes the kind cluster's container.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { CAPI_CLUSTER_RESOURCE } from "../../src/api/cluster-api.ts";
import type { Condition } from "../../src/api/common.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import {
  CONTROLPLANE_API_VERSION,
  CONTROLPLANE_GROUP,
  CONTROLPLANE_RESOURCES,
  type EngineControlPlane,
} from "../../src/api/engine-control-plane.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { aProviderConfig } from "../support/builders.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { clusterctlComponents, clusterctlVariables } from "../support/clusterctl.ts";
import { conditionOf } from "../support/conditions.ts";
import { containersNamed, containerToolchain, docker, forbiddenLogLines } from "../support/containers.ts";
import { eventually } from "../support/eventually.ts";
import { kindManagement, NODE_DOCKER_SOCKET, REPO_ROOT } from "../support/kind-management.ts";
import { type CustomResource, readCustomObject } from "../support/maybe-absent.ts";
import { probeJobAnswer } from "../support/probe-job.ts";
import { profileOffered } from "../support/profile-offered.ts";
import { stopAtFirstFailure } from "../support/stop-at-first-failure.ts";
import { withWebhookCertificates } from "../support/webhook-certificates.ts";

const tools = containerToolchain();
const MANAGEMENT = "capictl-management";
/** `clusterctl init --target-namespace` for the engine (its components' own is openmcp-engine-system). */
const ENGINE_NS = "capictl-engine";
const NS = "capictl";
/** The components' Deployment runs `openmcp-engine:dev` with `--provider-name=engine --environment=default`. */
const ENGINE_IMAGE = "openmcp-engine:dev";
const PROFILE = "default.engine.kind";
const INFRA_GROUP = CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure.group;
/** In the Docker-socket mode: the engine's state folder at one path on the Docker host, the node and the Pods. */
const management = kindManagement(MANAGEMENT, { image: ENGINE_IMAGE, dockerSocket: true });
const { work, made, state: STATE } = management;
let custom: CustomObjectsApi;
let core: CoreV1Api;
/** What hack/capi/core-components.sh answered. */
let coreComponents: { file: string; image: string };

function answerOf(stdout: string, key: string): string {
  const line = stdout.split("\n").find((l) => l.startsWith(`${key}=`));
  if (!line) throw new Error(`hack/capi/core-components.sh printed no ${key}=…:\n${stdout}`);
  return line.slice(key.length + 1);
}

/** Creates or updates the objects as clusterctl does (server-side: the CRDs are too large for a client-side apply). */
const apply = (name: string, objects: readonly KubernetesObject[]) =>
  management.apply(name, objects, { serverSide: true });

/**
 * The Docker-socket mode, what the engine's `manager` Deployment needs beyond its components to run the `kind`
 * backend (as CAPD's manager mounts the socket): the host's socket mounted, its group as a supplementary group
 * (the Pod runs as uid 1000; the socket is root:<docker> 0660), the state folder a hostPath at the path the
 * Docker host knows (kind mounts each cluster's `authn/` from there into its node), and HOME on a writable
 * volume (the docker client keeps its config there; the root filesystem is read-only). No RBAC is added.
 */
function dockerSocketMode(deployment: KubernetesObject): unknown[] {
  const spec = (
    deployment as unknown as {
      spec: {
        template: {
          spec: {
            volumes: Array<{ name: string }>;
            containers: Array<{ name: string; args: string[]; volumeMounts: Array<{ name: string }> }>;
          };
        };
      };
    }
  ).spec.template.spec;
  const container = spec.containers.findIndex((c) => c.name === "manager");
  const manager = spec.containers[container];
  if (!manager) throw new Error("the engine's components have no container named manager");
  const pod = "/spec/template/spec";
  const at = `${pod}/containers/${container}`;
  return [
    {
      op: "add",
      path: `${pod}/securityContext/supplementalGroups`,
      value: [statSync("/var/run/docker.sock").gid],
    },
    {
      op: "replace",
      path: `${pod}/volumes/${spec.volumes.findIndex((v) => v.name === "state")}`,
      value: { name: "state", hostPath: { path: STATE, type: "Directory" } },
    },
    {
      op: "add",
      path: `${pod}/volumes/-`,
      value: { name: "docker", hostPath: { path: NODE_DOCKER_SOCKET, type: "Socket" } },
    },
    {
      op: "replace",
      path: `${at}/args/${manager.args.findIndex((a) => a.startsWith("--state-dir="))}`,
      value: `--state-dir=${STATE}`,
    },
    {
      op: "replace",
      path: `${at}/volumeMounts/${manager.volumeMounts.findIndex((m) => m.name === "state")}`,
      value: { name: "state", mountPath: STATE },
    },
    { op: "add", path: `${at}/volumeMounts/-`, value: { name: "docker", mountPath: "/var/run/docker.sock" } },
    { op: "add", path: `${at}/env/-`, value: { name: "HOME", value: "/tmp" } },
  ];
}

/** Every log line of the engine's Pods (current and previous containers) that says the API server forbade a call. */
const forbiddenLines = () =>
  forbiddenLogLines(management, ENGINE_NS, "app.kubernetes.io/name=openmcp-engine");

async function rolledOut(namespace: string, deployment: string): Promise<void> {
  await management.kubectl(
    "-n",
    namespace,
    "rollout",
    "status",
    `deployment/${deployment}`,
    "--timeout=300s",
  );
}

interface CapiClusterSeen {
  metadata: { name: string; uid: string };
  spec: { controlPlaneEndpoint?: { host: string; port: number } };
  status?: { phase?: string; conditions?: Condition[] };
}

const read = <T>(resource: CustomResource, name: string) => readCustomObject<T>(custom, resource, NS, name);

beforeAll(async () => {
  const answer = execFileSync(join(REPO_ROOT, "hack", "capi", "core-components.sh"), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, DOCKER: tools.docker },
    timeout: 900_000,
  });
  coreComponents = { file: answerOf(answer, "coreComponents"), image: answerOf(answer, "managerImage") };
  await management.loadImage(coreComponents.image);
  custom = management.kubeConfig.makeApiClient(CustomObjectsApi);
  core = management.kubeConfig.makeApiClient(CoreV1Api);
}, 900_000);

describe("Cluster API installed the clusterctl way, the engine its provider on the kind backend", {
  timeout: 900_000,
}, () => {
  stopAtFirstFailure();
  it("installs the core provider from the release manifest: variables defaulted, labelled, webhooks with their certificates; its manager Pod Ready", async () => {
    const text = readFileSync(coreComponents.file, "utf8");
    const variables = clusterctlVariables(text);
    expect(variables.map((v) => v.name)).toContain("CLUSTER_TOPOLOGY");
    expect(variables.filter((v) => v.default === undefined)).toEqual([]);
    const objects = await withWebhookCertificates(
      clusterctlComponents(text, { manifestLabel: "cluster-api", variables: { CLUSTER_TOPOLOGY: "true" } }),
    );
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: Array<{ name: string; image: string; args: string[] }> } } };
    };
    expect(deployment.spec.template.spec.containers.map((c) => [c.name, c.image])).toEqual([
      ["manager", coreComponents.image],
    ]);
    expect(deployment.spec.template.spec.containers[0]?.args).toContain(
      "--feature-gates=MachinePool=true,ClusterTopology=true,RuntimeSDK=false,MachineSetPreflightChecks=true,MachineWaitForVolumeDetachConsiderVolumeAttachments=true,PriorityQueue=true,ReconcilerRateLimiting=true,InPlaceUpdates=false,MachineTaintPropagation=false",
    );
    expect(objects.every((o) => o.metadata?.labels?.["cluster.x-k8s.io/provider"] === "cluster-api")).toBe(
      true,
    );
    expect(objects.some((o) => (o.apiVersion ?? "").startsWith("cert-manager.io/"))).toBe(false);
    await apply("core-components", objects);
    await rolledOut("capi-system", "capi-controller-manager");
    // Its validating webhook answers through the serving certificate and the CA bundle the test made: a Cluster
    // naming nothing is refused by the manager, not by the API server's schema.
    const refusal = await eventually(
      async () => {
        const message = await custom
          .createNamespacedCustomObject({
            ...CAPI_CLUSTER_RESOURCE,
            namespace: "default",
            body: {
              apiVersion: "cluster.x-k8s.io/v1beta2",
              kind: "Cluster",
              metadata: { name: "naming-nothing" },
              // The schema asks for some spec; the webhook for a reference or a topology.
              spec: { paused: true },
            },
          })
          .then(
            () => "created",
            (error: unknown) => String((error as { body?: unknown }).body ?? error),
          );
        if (!message.includes("denied the request")) throw new Error(message);
        return message;
      },
      { what: "Cluster API's validating webhook answering", timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(refusal).toContain(
      "one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set",
    );
  });

  it("installs the engine's components as clusterctl does, with the Docker-socket mode: the manager Deployment Ready with --capi, the kind profile offered", async () => {
    const text = execFileSync(
      process.execPath,
      [join(REPO_ROOT, "src", "cli", "main.ts"), "capi-components"],
      {
        encoding: "utf8",
      },
    );
    expect(clusterctlVariables(text)).toEqual([]);
    const objects = clusterctlComponents(text, {
      manifestLabel: "infrastructure-openmcp-engine",
      targetNamespace: ENGINE_NS,
    });
    expect(objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata?.name)).toEqual([ENGINE_NS]);
    const deployment = objects.find((o) => o.kind === "Deployment");
    if (!deployment) throw new Error("the engine's components have no Deployment");
    expect(
      objects.some((o) => o.kind === "ClusterRoleBinding" && JSON.stringify(o).includes("cluster-admin")),
    ).toBe(false);
    await apply("engine-components", objects);
    writeFileSync(join(work, "docker-socket-mode.json"), JSON.stringify(dockerSocketMode(deployment)));
    await management.kubectl(
      "-n",
      ENGINE_NS,
      "patch",
      "deployment",
      deployment.metadata?.name ?? "",
      "--type=json",
      "--patch-file",
      join(work, "docker-socket-mode.json"),
    );
    await rolledOut(ENGINE_NS, deployment.metadata?.name ?? "");
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kind", backend: "kind", providerRef: { name: "engine" } }),
    });
    const profile = await profileOffered(custom, PROFILE, { timeoutMs: 120_000 });
    expect(profile.spec.supportedVersions?.map((v) => v.version)).toContain(tools.kubernetesVersion);
  });

  let controlPlane: EngineControlPlane;
  it("makes a CAPI Cluster on an EngineControlPlane a real kind cluster: Available as Cluster API's manager computes it", async () => {
    const started = performance.now();
    await core.createNamespace({ body: { metadata: { name: NS } } });
    controlPlane = (await custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlane,
      namespace: NS,
      body: {
        apiVersion: CONTROLPLANE_API_VERSION,
        kind: "EngineControlPlane",
        metadata: { name: "managed" },
        spec: { profile: PROFILE, version: `v${tools.kubernetesVersion}` },
      },
    })) as EngineControlPlane;
    made.push(kindClusterNameOf(controlPlane.metadata.name ?? "", controlPlane.metadata.uid ?? ""));
    await custom.createNamespacedCustomObject({
      ...CONTROLPLANE_RESOURCES.EngineControlPlaneInfrastructure,
      namespace: NS,
      body: {
        apiVersion: `${INFRA_GROUP}/v1alpha1`,
        kind: "EngineControlPlaneInfrastructure",
        metadata: { name: "managed" },
      },
    });
    await createCapiObject(custom, NS, "Cluster", "managed", {
      controlPlaneRef: { apiGroup: CONTROLPLANE_GROUP, kind: "EngineControlPlane", name: "managed" },
      infrastructureRef: {
        apiGroup: INFRA_GROUP,
        kind: "EngineControlPlaneInfrastructure",
        name: "managed",
      },
    });
    const wanted = { ControlPlaneInitialized: "True", Available: "True", RemoteConnectionProbe: "True" };
    const cluster = await eventually(
      async () => {
        const seen = await read<CapiClusterSeen>(CAPI_CLUSTER_RESOURCE, "managed");
        const off = Object.entries(wanted).filter(
          ([type, status]) => conditionOf(seen, type)?.status !== status,
        );
        if (off.length > 0)
          throw new Error(
            `Cluster ${NS}/managed: ${off.map(([type]) => `${type}=${JSON.stringify(conditionOf(seen, type))}`).join("; ")}\nEngineControlPlane: ${JSON.stringify((await read<EngineControlPlane>(CONTROLPLANE_RESOURCES.EngineControlPlane, "managed"))?.status)}`,
          );
        return seen as CapiClusterSeen;
      },
      { what: `Cluster ${NS}/managed Available`, timeoutMs: 600_000, intervalMs: 2_000 },
    );
    console.log(
      `capi-clusterctl: a CAPI Cluster on a kind EngineControlPlane Available in ${Math.round(performance.now() - started)} ms`,
    );
    expect(cluster.status?.phase).toBe("Provisioned");
    // Cluster API's conversion webhook, behind the same certificates: the Cluster read at v1beta1.
    const older = JSON.parse(
      await management.kubectl("-n", NS, "get", "clusters.v1beta1.cluster.x-k8s.io", "managed", "-o", "json"),
    );
    expect(older.apiVersion).toBe("cluster.x-k8s.io/v1beta1");
    expect(older.spec.controlPlaneRef).toMatchObject({ kind: "EngineControlPlane", name: "managed" });
    const name = kindClusterNameOf(controlPlane.metadata.name ?? "", controlPlane.metadata.uid ?? "");
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
  });

  it("its <cluster>-kubeconfig Secret reaches the kind cluster's API server from a Pod of the management cluster and from the host", async () => {
    const secret = await core.readNamespacedSecret({ namespace: NS, name: "managed-kubeconfig" });
    expect(secret.type).toBe("cluster.x-k8s.io/secret");
    const text = Buffer.from(secret.data?.value ?? "", "base64").toString("utf8");
    const name = kindClusterNameOf(controlPlane.metadata.name ?? "", controlPlane.metadata.uid ?? "");
    // From a Pod: the Secret mounted, the API server on the kind network, the admin's client certificate.
    const probe = [
      "const { readFileSync } = require('node:fs');",
      "const { parse } = require('/app/node_modules/yaml');",
      "const k = parse(readFileSync('/kubeconfig/value', 'utf8'));",
      "const server = new URL(k.clusters[0].cluster.server);",
      "const b = (v) => Buffer.from(v, 'base64');",
      "const u = k.users[0].user;",
      "const get = (path) => new Promise((ok) => require('node:https').get({ host: server.hostname, port: server.port, path, ca: b(k.clusters[0].cluster['certificate-authority-data']), cert: u['client-certificate-data'] && b(u['client-certificate-data']), key: u['client-key-data'] && b(u['client-key-data']), headers: u.token ? { authorization: 'Bearer ' + u.token } : {} }, (r) => { let body = ''; r.on('data', (c) => body += c); r.on('end', () => ok([r.statusCode, body])); }).on('error', (e) => ok([e.code, ''])));",
      "(async () => { const [code, body] = await get('/api/v1/namespaces/kube-system'); console.log(JSON.stringify({ server: server.host, code, name: code === 200 ? JSON.parse(body).metadata.name : body })); })();",
    ].join(" ");
    const answer = await probeJobAnswer(management, {
      namespace: NS,
      job: "use-kubeconfig",
      image: ENGINE_IMAGE,
      secretName: "managed-kubeconfig",
      mountPath: "/kubeconfig",
      probe,
      folder: work,
    });
    expect(answer).toEqual({ server: `${name}-control-plane:6443`, code: 200, name: "kube-system" });

    // From the host: the same credentials at the port kind published on the host.
    const published =
      (await docker("port", `${name}-control-plane`, "6443/tcp")).split("\n")[0]?.trim() ?? "";
    const fromHost = new KubeConfig();
    fromHost.loadFromString(text);
    const current = fromHost.getCurrentCluster();
    fromHost.clusters = fromHost.clusters.map((c) =>
      c.name === current?.name ? { ...c, server: `https://${published.replace("0.0.0.0", "127.0.0.1")}` } : c,
    );
    const namespaces = await fromHost.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("kube-system");
  });

  it("deleting the CAPI Cluster removes the kind cluster's container; no engine log line was forbidden", async () => {
    const name = kindClusterNameOf(controlPlane.metadata.name ?? "", controlPlane.metadata.uid ?? "");
    await custom.deleteNamespacedCustomObject({ ...CAPI_CLUSTER_RESOURCE, namespace: NS, name: "managed" });
    await eventually(
      async () => {
        expect(await read(CAPI_CLUSTER_RESOURCE, "managed")).toBeUndefined();
        expect(await read(CONTROLPLANE_RESOURCES.EngineControlPlane, "managed")).toBeUndefined();
      },
      { what: "the Cluster and its EngineControlPlane gone", timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(await containersNamed(name)).toEqual([]);
    expect(await forbiddenLines()).toEqual([]);
  });
});
