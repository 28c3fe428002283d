/**
 * openMCP's local landscape with the engine's image in place of openMCP's kind provider, as openMCP's operator
 * deploys one: a kind platform cluster whose node has the host's Docker socket mounted; the engine's init Job,
 * then a two-replica Deployment with the operator's flags and environment, the socket as a `hostPath` volume and
 * nothing else mounted, no securityContext, no `--backend` and no ProviderConfig applied by anyone (`init` makes
 * the default one, publishing profile `kind` as openMCP's kind provider does). The platform kind cluster is
 * described by a Cluster (profile `kind`) and adopted. The engine's scheduler, configured as openMCP's
 * bootstrapper configures kind landscapes (`profile: kind` for every purpose; its ConfigMap named in the
 * environment, since the operator passes no flags of ours), answers ClusterRequests of the purposes platform
 * (the adopted cluster), onboarding, workload and mcp, each new Cluster a real sibling kind cluster made from
 * the Pod and named with its Cluster's name as prefix (as openMCP's e2e framework finds them). A token AccessRequest's kubeconfig works from a Pod of
 * the platform cluster (the internal endpoint) and from the host (the local-access URL); deleting the requests
 * removes the siblings' containers and leaves the platform; the leader's Pod deleted mid-create still gives one
 * kind cluster (the new leader has no state of the old one: it reads the cluster's volume). A Cluster left as
 * openMCP's kind provider leaves it (its finalizer, its status, its kind cluster's name) is taken over with the
 * provider stopped: its node container not re-created, a token minted before still works, a new AccessRequest is
 * granted. Then the same platform as a user sets it up with `deploy/kind` (deploy/base's
 * least-privilege RBAC, non-root with only the socket's group): a Cluster becomes a sibling kind cluster and a
 * token AccessRequest on it is Granted, with no call forbidden.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import { ACCESS_REQUEST_ANNOTATIONS } from "../../src/api/constants/access-request.ts";
import { CLUSTER_FINALIZERS } from "../../src/api/constants/cluster.ts";
import { CLUSTER_REQUEST_LABELS } from "../../src/api/constants/cluster-request.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { KIND_NAME_ANNOTATION, kindClusterNameOf } from "../../src/providers/kind/names.ts";
import {
  configMapAnswersFromPod,
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  issuedKubeconfig,
} from "../support/access-proofs.ts";
import { accessGranted, createAccessRequest } from "../support/access-requests.ts";
import { aCluster, aClusterRequest, aProviderConfig } from "../support/builders.ts";
import {
  containersNamed,
  containerToolchain,
  createKindCluster,
  docker,
  forbiddenLogLines,
  run,
} from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { kindManagement, NODE_DOCKER_SOCKET, REPO_ROOT } from "../support/kind-management.ts";
import { type CustomResource, readCustomObject } from "../support/maybe-absent.ts";
import { profileOffered } from "../support/profile-offered.ts";
import { stopAtFirstFailure } from "../support/stop-at-first-failure.ts";

const tools = containerToolchain();
const PLATFORM = "omc-landscape";
const PROVIDER = "kind";
const SYSTEM = `cp-${PROVIDER}`;
const NS = "landscape";
/** The finalizer openMCP's kind provider puts on its Clusters. */
const OPENMCP_KIND_FINALIZER = "clusters.openmcp.cloud/finalizer";
/** The profile openMCP's kind provider publishes, and the bootstrapper's configuration names. */
const PROFILE = "kind";
const IMAGE = "openmcp-engine:dev";
/** Where the bootstrapper's kind configuration puts Shared workload clusters. */
const WORKLOADS = "workload-clusters";
/**
 * The scheduler configuration openMCP's bootstrapper writes for kind landscapes (openMCP operator format):
 * mcp Exclusive; platform and onboarding Shared and kept without requests; workload Shared by up to 20.
 */
const BOOTSTRAPPER_SCHEDULER = `
scheduler:
  purposeMappings:
    mcp:
      template:
        spec: {profile: ${PROFILE}, tenancy: Exclusive}
    platform:
      template:
        metadata:
          labels: {"${CLUSTER_REQUEST_LABELS.deleteWithoutRequests}": "false"}
        spec: {profile: ${PROFILE}, tenancy: Shared}
    onboarding:
      template:
        metadata:
          labels: {"${CLUSTER_REQUEST_LABELS.deleteWithoutRequests}": "false"}
        spec: {profile: ${PROFILE}, tenancy: Shared}
    workload:
      tenancyCount: 20
      template:
        metadata: {namespace: ${WORKLOADS}}
        spec: {profile: ${PROFILE}, tenancy: Shared}
`;
/**
 * The platform with the host's Docker socket in its node (and a state folder at one path on the host and node,
 * which only the deploy/kind test's Pod mounts; openMCP's deployment mounts nothing but the socket).
 */
const platform = kindManagement(PLATFORM, { image: IMAGE, dockerSocket: true });
const { work, made, state: STATE } = platform;
let custom: CustomObjectsApi;

const read = <T>(resource: CustomResource, name: string, namespace = NS) =>
  readCustomObject<T>(custom, resource, namespace, name);
const clusterReady = (name: string, namespace = NS) =>
  eventually(
    async () =>
      satisfying(
        await read<Cluster>(RESOURCES.Cluster, name, namespace),
        (c) => c?.status?.phase === "Ready",
      ),
    {
      what: `Cluster ${namespace}/${name} Ready`,
      timeoutMs: 600_000,
      intervalMs: 1_000,
    },
  ) as Promise<Cluster>;

/** Every log line of the provider's Pods that says the API server forbade a call. */
const forbiddenLines = (namespace = SYSTEM, selector = `app.kubernetes.io/instance=${PROVIDER}`) =>
  forbiddenLogLines(platform, namespace, selector);

/**
 * A token AccessRequest named as the Ready Cluster `cluster` is granted, and its kubeconfig, with the host's URL of
 * the `clusters.open-control-plane.io/local-access` annotation swapped in, does exactly what was asked.
 */
async function grantedFromHost(cluster: Cluster): Promise<void> {
  const name = cluster.metadata.name ?? "";
  await createAccessRequest(custom, NS, name, configMapTokenRequest({ name, namespace: NS }));
  const granted = await accessGranted(custom, NS, name, { timeoutMs: 180_000, intervalMs: 1_000 });
  const { kubeConfig: fromHost } = await issuedKubeconfig(
    platform.kubeConfig.makeApiClient(CoreV1Api),
    NS,
    granted.status?.secretRef?.name ?? "",
  );
  const external = cluster.status?.endpoints?.find((e) => e.name === "apiserver-external")?.url ?? "";
  expect(granted.metadata.annotations?.[ACCESS_REQUEST_ANNOTATIONS.localAccess]).toBe(external);
  fromHost.clusters = fromHost.clusters.map((c) => ({ ...c, server: external }));
  await expectConfigMapAccessOnly(fromHost);
}

/** The name of the provider's Pod that holds the leader Lease. */
/** Deletes Cluster `cluster` and waits until its kind cluster `name` is gone with it: no container left. */
async function deleteWithItsKindCluster(cluster: string, name: string): Promise<void> {
  await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: cluster });
  await eventually(async () => expect(await containersNamed(name)).toEqual([]), {
    what: `${name} removed with its Cluster`,
    timeoutMs: 180_000,
    intervalMs: 1_000,
  });
}

async function leaderPod(): Promise<string> {
  const holder = await platform.kubectl(
    "-n",
    SYSTEM,
    "get",
    "lease",
    `${PROVIDER}.engine.openmcp.cloud`,
    "-o",
    "jsonpath={.spec.holderIdentity}",
  );
  return holder.replace(/_[^_]*$/, "");
}

/** The resident memory of the engine's process (pid 1 of its container) in `pod`, in MiB. */
async function engineRssMiB(pod: string): Promise<number> {
  const status = await platform.kubectl("-n", SYSTEM, "exec", pod, "--", "cat", "/proc/1/status");
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return Math.round(kib / 1024);
}

/** The provider as openMCP's operator deploys a ClusterProvider whose `extraVolumes` mount the host's Docker socket. */
function providerManifests(): unknown[] {
  const env = [
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
    { name: "POD_SERVICE_ACCOUNT_NAME", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
    // The operator passes only its own flags; a ClusterProvider's env names the scheduler's configuration.
    { name: "OPENMCP_ENGINE_SCHEDULER_CONFIG_MAP", value: `${SYSTEM}/scheduler` },
  ];
  // openMCP's ClusterProvider `extraVolumes`: the host's Docker socket, and nothing else.
  const volumes = [{ name: "docker", hostPath: { path: NODE_DOCKER_SOCKET, type: "Socket" } }];
  const volumeMounts = [{ name: "docker", mountPath: "/var/run/docker.sock" }];
  const flags = ["--environment=openmcp", "--verbosity=INFO", `--provider-name=${PROVIDER}`];
  const labels = { "app.kubernetes.io/instance": PROVIDER, "app.kubernetes.io/component": "controller" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: SYSTEM } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: WORKLOADS } },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "scheduler", namespace: SYSTEM },
      data: { "config.yaml": BOOTSTRAPPER_SCHEDULER },
    },
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
  custom = platform.kubeConfig.makeApiClient(CustomObjectsApi);
}, 900_000);

describe("openMCP's kind landscape, the engine its kind ClusterProvider", { timeout: 900_000 }, () => {
  stopAtFirstFailure();
  it("deploys as the operator does, with only the Docker socket and no ProviderConfig applied: init makes the default one, and profile kind offers the node images the host holds", async () => {
    await platform.apply("provider", providerManifests());
    await platform.jobComplete(SYSTEM, `${PROVIDER}-init`);
    await platform.kubectl("-n", SYSTEM, "rollout", "status", `deployment/${PROVIDER}`, "--timeout=300s");
    const config = (await custom.getClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: PROVIDER,
    })) as ProviderConfig;
    expect(config.spec).toMatchObject({ backend: "kind", providerRef: { name: PROVIDER } });
    const profile = await profileOffered(custom, PROFILE, { timeoutMs: 120_000 });
    expect(profile.spec.supportedVersions?.map((v) => v.version)).toContain(tools.kubernetesVersion);
  });

  it("adopts the running platform kind cluster its Cluster names, creating nothing", async () => {
    const described = aCluster({
      name: "platform",
      namespace: NS,
      profile: PROFILE,
      version: tools.kubernetesVersion,
      annotations: { [KIND_NAME_ANNOTATION]: PLATFORM },
      labels: { [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "false" },
    });
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: { ...described, spec: { ...described.spec, purposes: ["platform"] } },
    });
    const cluster = await clusterReady("platform");
    expect(cluster.status?.endpoints?.find((e) => e.name === "apiserver-internal")?.url).toBe(
      `https://${PLATFORM}-control-plane:6443`,
    );
    expect(await containersNamed(PLATFORM)).toEqual([`${PLATFORM}-control-plane`]);
  });

  let mcp: Cluster;
  const siblings: Cluster[] = [];
  it("answers ClusterRequests of the bootstrapper's four purposes: platform with the adopted cluster, the others with new sibling kind clusters made from the Pod", async () => {
    const purposes = ["platform", "onboarding", "workload", "mcp"];
    const started = performance.now();
    for (const purpose of purposes) {
      await custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: NS,
        body: aClusterRequest({ name: purpose, namespace: NS, purpose }),
      });
    }
    const granted = await Promise.all(
      purposes.map(
        async (purpose) =>
          (await eventually(
            async () =>
              satisfying(
                await read<ClusterRequest>(RESOURCES.ClusterRequest, purpose),
                (r) => r?.status?.phase === "Granted" && r.status.cluster !== undefined,
              ),
            { what: `ClusterRequest ${NS}/${purpose} Granted`, timeoutMs: 120_000, intervalMs: 1_000 },
          )) as ClusterRequest,
      ),
    );
    const [platformRef, ...newRefs] = granted.map(
      (request) => request.status?.cluster ?? { name: "", namespace: "" },
    );
    expect(platformRef).toMatchObject({ name: "platform", namespace: NS });
    expect(newRefs[1]?.namespace).toBe(WORKLOADS);
    for (const ref of newRefs) {
      const cluster = await eventually(
        async () => satisfying(await read<Cluster>(RESOURCES.Cluster, ref.name, ref.namespace), Boolean),
        { what: `Cluster ${ref.namespace}/${ref.name}` },
      );
      made.push(kindClusterNameOf(cluster?.metadata.name ?? "", cluster?.metadata.uid ?? ""));
    }
    for (const ref of newRefs) siblings.push(await clusterReady(ref.name, ref.namespace));
    // As openMCP's e2e framework finds an MCP's kind cluster: the first whose name starts with the Cluster's.
    const listed = (await run(tools.kind, ["get", "clusters"])).split("\n");
    for (const ref of newRefs)
      expect(listed.find((name) => name.startsWith(ref.name))).toBe(
        kindClusterNameOf(ref.name, siblings.find((c) => c.metadata.name === ref.name)?.metadata.uid ?? ""),
      );
    console.log(
      `kind landscape: three kind clusters made from the engine's Pod for ClusterRequests Ready in ${Math.round(performance.now() - started)} ms`,
    );
    const leader = await leaderPod();
    console.log(
      `kind landscape: the leader's engine process RSS ${await engineRssMiB(leader)} MiB while driving ${siblings.length + 1} kind clusters (the platform adopted)`,
    );
    mcp = siblings[2] as Cluster;
    expect(mcp.spec.tenancy).toBe("Exclusive");
    for (const sibling of siblings) {
      const name = kindClusterNameOf(sibling.metadata.name ?? "", sibling.metadata.uid ?? "");
      expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
      expect(sibling.status?.endpoints?.map((e) => e.name)).toEqual([
        "apiserver-external",
        "apiserver-internal",
      ]);
    }
    expect(await containersNamed(PLATFORM)).toEqual([`${PLATFORM}-control-plane`]);
  });

  it("grants a token AccessRequest whose kubeconfig does exactly what was asked, from a Pod and from the host", async () => {
    // As openMCP's mcp flow asks: for the ClusterRequest's cluster, by the request.
    await createAccessRequest(custom, NS, "mcp", {
      ...configMapTokenRequest({ name: mcp.metadata.name ?? "", namespace: NS }),
      clusterRef: undefined,
      requestRef: { name: "mcp", namespace: NS },
    });
    const granted = await accessGranted(custom, NS, "mcp", { timeoutMs: 180_000, intervalMs: 1_000 });
    const external = mcp.status?.endpoints?.find((e) => e.name === "apiserver-external")?.url;
    expect(granted.metadata.annotations?.[ACCESS_REQUEST_ANNOTATIONS.localAccess]).toBe(external);
    const secretName = granted.status?.secretRef?.name ?? "";
    const { text } = await issuedKubeconfig(platform.kubeConfig.makeApiClient(CoreV1Api), NS, secretName);
    expect(text).toContain(
      `server: https://${kindClusterNameOf(mcp.metadata.name ?? "", mcp.metadata.uid ?? "")}-control-plane:6443`,
    );

    // From a Pod of the platform cluster: the Secret mounted, the internal endpoint, exactly the asked rights.
    const answers = await configMapAnswersFromPod(platform, {
      namespace: NS,
      secretName,
      image: IMAGE,
      job: "use-access",
      folder: work,
    });
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

  it("removes the siblings' containers when their requests go (onboarding is kept without requests until its Cluster is deleted), and leaves the adopted platform running", async () => {
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name: "mcp" });
    for (const purpose of ["platform", "onboarding", "workload", "mcp"]) {
      await custom.deleteNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: NS,
        name: purpose,
      });
    }
    const [onboarding, workload] = siblings as [Cluster, Cluster, Cluster];
    const gone = async (cluster: Cluster) => {
      await eventually(
        async () =>
          expect(
            await read<Cluster>(RESOURCES.Cluster, cluster.metadata.name ?? "", cluster.metadata.namespace),
          ).toBeUndefined(),
        { what: `Cluster ${cluster.metadata.namespace}/${cluster.metadata.name} gone`, timeoutMs: 180_000 },
      );
      expect(
        await containersNamed(kindClusterNameOf(cluster.metadata.name ?? "", cluster.metadata.uid ?? "")),
      ).toEqual([]);
    };
    // mcp is Exclusive and workload Shared with no request left: the scheduler deletes both.
    await gone(mcp);
    await gone(workload);
    // onboarding and platform are labelled to stay without requests.
    expect(await read<Cluster>(RESOURCES.Cluster, onboarding.metadata.name ?? "", NS)).toBeDefined();
    expect(await read<Cluster>(RESOURCES.Cluster, "platform", NS)).toBeDefined();
    await custom.deleteNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: onboarding.metadata.name ?? "",
    });
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "platform" });
    await gone(onboarding);
    await eventually(async () => expect(await read<Cluster>(RESOURCES.Cluster, "platform")).toBeUndefined(), {
      what: "Cluster platform gone",
      timeoutMs: 180_000,
    });
    expect(await containersNamed(PLATFORM)).toEqual([`${PLATFORM}-control-plane`]);
    expect(await forbiddenLines()).toEqual([]);
  });
  it("gives one kind cluster when the leader's Pod is deleted mid-create (after the siblings went, so that its node boots beside the platform's alone): the new leader starts the create over", async () => {
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
    const name = kindClusterNameOf(created.metadata.name ?? "", created.metadata.uid ?? "");
    made.push(name);
    // The create runs: its node container exists.
    await eventually(async () => expect(await containersNamed(name)).toEqual([`${name}-control-plane`]), {
      what: `kind's node container of ${name}`,
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    const leader = await leaderPod();
    await platform.kubectl("-n", SYSTEM, "delete", "pod", leader, "--grace-period=0", "--force");
    const ready = await clusterReady("killed");
    expect(ready.metadata.uid).toBe(created.metadata.uid);
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    await deleteWithItsKindCluster("killed", name);
  });

  it("takes over a Cluster left by openMCP's kind provider (its finalizer, status and kind cluster name) with that provider stopped: the node container is not re-created, a token minted before still works, a new AccessRequest is granted", async () => {
    // openMCP's kind provider stops (here: the engine's replicas, the only provider of profile kind).
    await platform.kubectl("-n", SYSTEM, "scale", `deployment/${PROVIDER}`, "--replicas=0");
    await platform.kubectl(
      "-n",
      SYSTEM,
      "wait",
      "--for=delete",
      "pod",
      "-l",
      `app.kubernetes.io/instance=${PROVIDER}`,
      "--timeout=180s",
    );
    // As openMCP's kind provider leaves a Cluster: its finalizer, its status, a kind cluster named <name>.<uid prefix>.
    const described = aCluster({
      name: "legacy",
      namespace: NS,
      profile: PROFILE,
      tenancy: "Exclusive",
      version: tools.kubernetesVersion,
    });
    const created = (await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: { ...described, metadata: { ...described.metadata, finalizers: [OPENMCP_KIND_FINALIZER] } },
    })) as Cluster;
    const name = kindClusterNameOf("legacy", created.metadata.uid ?? "");
    made.push(name);
    const legacy = await createKindCluster(name);
    await platform.kubectl(
      "-n",
      NS,
      "patch",
      "clusters.clusters.openmcp.cloud",
      "legacy",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          observedGeneration: created.metadata.generation ?? 1,
          phase: "Ready",
          conditions: [
            {
              type: "KindReady",
              status: "True",
              reason: "ClusterExists",
              message: "",
              observedGeneration: 1,
              lastTransitionTime: new Date().toISOString(),
            },
            {
              type: "Ready",
              status: "True",
              reason: "ClusterAndMetalLBReady",
              message: "",
              observedGeneration: 1,
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      }),
    );
    const nodeId = (await docker("inspect", "--format", "{{.Id}}", `${name}-control-plane`)).trim();
    // Access granted before the switch: a token of the cluster's own, for the host's endpoint.
    await legacy.kubectl("-n", "default", "create", "serviceaccount", "before");
    await legacy.kubectl("create", "clusterrole", "list-namespaces", "--verb=list", "--resource=namespaces");
    await legacy.kubectl(
      "create",
      "clusterrolebinding",
      "before",
      "--clusterrole=list-namespaces",
      "--serviceaccount=default:before",
    );
    const token = (
      await legacy.kubectl("-n", "default", "create", "token", "before", "--duration=2h")
    ).trim();
    const before = new KubeConfig();
    before.loadFromString((await run(tools.kind, ["get", "kubeconfig", "--name", name])).toString());
    before.users = before.users.map((user) => ({ name: user.name, token }));
    const listsNamespaces = async () =>
      (await before.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(await listsNamespaces()).toContain("kube-system");

    // The engine starts again in its place.
    await platform.kubectl("-n", SYSTEM, "scale", `deployment/${PROVIDER}`, "--replicas=2");
    await platform.kubectl("-n", SYSTEM, "rollout", "status", `deployment/${PROVIDER}`, "--timeout=300s");
    const served = (await eventually(
      async () =>
        satisfying(
          await read<Cluster>(RESOURCES.Cluster, "legacy"),
          (c) =>
            c?.status?.phase === "Ready" &&
            (c.metadata.finalizers ?? []).includes(CLUSTER_FINALIZERS.cluster) &&
            (c.status.endpoints ?? []).length === 2,
        ),
      { what: "Cluster legacy served by the engine", timeoutMs: 300_000, intervalMs: 1_000 },
    )) as Cluster;
    // Taken over, not made again: the same node container, the foreign finalizer kept, the old token valid.
    expect((await docker("inspect", "--format", "{{.Id}}", `${name}-control-plane`)).trim()).toBe(nodeId);
    expect(served.metadata.finalizers).toContain(OPENMCP_KIND_FINALIZER);
    expect(await listsNamespaces()).toContain("kube-system");
    // New access, granted by the engine.
    await grantedFromHost(served);
    expect((await docker("inspect", "--format", "{{.Id}}", `${name}-control-plane`)).trim()).toBe(nodeId);

    // Switched for good (docs/migrate.md): the old provider's finalizer goes, and the Cluster with its cluster.
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name: "legacy" });
    await platform.kubectl(
      "-n",
      NS,
      "patch",
      "clusters.clusters.openmcp.cloud",
      "legacy",
      "--type=json",
      "-p",
      JSON.stringify([
        { op: "test", path: "/metadata/finalizers/0", value: OPENMCP_KIND_FINALIZER },
        { op: "remove", path: "/metadata/finalizers/0" },
      ]),
    );
    await deleteWithItsKindCluster("legacy", name);
  });

  it("kubectl apply -k deploy/kind, as a user sets it up (least-privilege RBAC, non-root, the socket's group only): a Cluster becomes a sibling kind cluster and a token AccessRequest on it is Granted", async () => {
    // The operator-style provider steps aside; its profile stays, unserved.
    await platform.kubectl("-n", SYSTEM, "scale", `deployment/${PROVIDER}`, "--replicas=0");
    const overlay = join(work, "deploy-kind");
    mkdirSync(overlay, { recursive: true });
    const deployment = { group: "apps", version: "v1", kind: "Deployment", name: "openmcp-engine" };
    // What a user sets for their machine: the socket's group, and (here) the state folder at another path.
    const socketGroup = Number((await run("stat", ["-c", "%g", "/var/run/docker.sock"])).trim());
    writeFileSync(
      join(overlay, "kustomization.yaml"),
      JSON.stringify({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        resources: [relative(overlay, join(REPO_ROOT, "deploy/kind"))],
        patches: [
          {
            target: deployment,
            patch: JSON.stringify([
              {
                op: "replace",
                path: "/spec/template/spec/securityContext/supplementalGroups",
                value: [socketGroup],
              },
              {
                op: "test",
                path: "/spec/template/spec/containers/0/args/4",
                value: "--state-dir=/var/lib/openmcp-engine",
              },
              {
                op: "replace",
                path: "/spec/template/spec/containers/0/args/4",
                value: `--state-dir=${STATE}`,
              },
              { op: "test", path: "/spec/template/spec/volumes/1/name", value: "state" },
              { op: "replace", path: "/spec/template/spec/volumes/1/hostPath/path", value: STATE },
              { op: "test", path: "/spec/template/spec/containers/0/volumeMounts/1/name", value: "state" },
              {
                op: "replace",
                path: "/spec/template/spec/containers/0/volumeMounts/1/mountPath",
                value: STATE,
              },
            ]),
          },
        ],
      }),
    );
    await platform.kubectl("apply", "--server-side", "--force-conflicts", "-k", overlay);
    await platform.kubectl(
      "-n",
      "openmcp-engine-system",
      "rollout",
      "status",
      "deployment/openmcp-engine",
      "--timeout=300s",
    );
    await custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "kind-base", backend: "kind", providerRef: { name: "engine" } }),
    });
    const created = (await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({
        name: "by-deploy",
        namespace: NS,
        profile: "default.engine.kind-base",
        tenancy: "Exclusive",
      }),
    })) as Cluster;
    const name = kindClusterNameOf(created.metadata.name ?? "", created.metadata.uid ?? "");
    made.push(name);
    const ready = await clusterReady("by-deploy");
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    await grantedFromHost(ready);
    await deleteWithItsKindCluster("by-deploy", name);
    expect(await forbiddenLines("openmcp-engine-system", "app.kubernetes.io/name=openmcp-engine")).toEqual(
      [],
    );
  });
});
