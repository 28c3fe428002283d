/** The deployment as a platform engineer applies it: clean manifests, least-privilege RBAC that suffices, a lean image tree. */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  V1MicroTime,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CAPI_CLUSTER_RESOURCE } from "../../src/api/cluster-api.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { CONTROLPLANE_API_VERSION, CONTROLPLANE_RESOURCES } from "../../src/api/engine-control-plane.ts";
import { capiComponents } from "../../src/cli/capi-components.ts";
import {
  type ControlPlane,
  kubeconfigYaml,
  startControlPlane,
} from "../../src/controlplane/control-plane.ts";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { installCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { aCluster, anAccessRequest, aProviderConfig } from "../support/builders.ts";
import { createCapiObject } from "../support/capi-objects.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { renderKustomization } from "../support/kustomize.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";

const root = join(import.meta.dirname, "..", "..");
const base = join(root, "deploy", "base");
const main = join(root, "src", "cli", "main.ts");
const NAMESPACE = "openmcp-engine-system";

/** Every object of the kustomize base, in file order (kustomization.yaml itself excluded). */
function manifests(directory: string): KubernetesObject[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml")
    .sort()
    .flatMap((file) => loadAllYaml(readFileSync(join(directory, file), "utf8")) as KubernetesObject[]);
}

let controlPlane: ControlPlane;
let objects: KubernetesObjectApi;

beforeAll(async () => {
  controlPlane = await startControlPlane();
  objects = KubernetesObjectApi.makeApiClient(controlPlane.kubeConfig);
});

afterAll(async () => {
  await controlPlane?.stop();
});

const apply = (object: KubernetesObject, dryRun?: "All") =>
  objects.patch(object, undefined, dryRun, "deploy-test", true, PatchStrategy.ServerSideApply);

/**
 * Applies the RBAC of `objects` (default: the base's files) and returns access as the controller's
 * ServiceAccount (a client and a kubeconfig file).
 */
async function asTheController(objects: readonly KubernetesObject[] = manifests(base)) {
  const needed = objects.filter(
    (o) => o.kind !== "Deployment" && o.kind !== "Service" && o.kind !== "CustomResourceDefinition",
  );
  for (const object of needed) await apply(object);
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  const token = (
    await core.createNamespacedServiceAccountToken({
      name: "openmcp-engine",
      namespace: NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    })
  ).status?.token;
  const asController = new KubeConfig();
  asController.loadFromOptions({
    clusters: [
      {
        name: "test",
        server: controlPlane.server,
        caData: controlPlane.kubeConfig.getCurrentCluster()?.caData,
      },
    ],
    users: [{ name: "openmcp-engine", token: token ?? "" }],
    contexts: [{ name: "sa", cluster: "test", user: "openmcp-engine", namespace: NAMESPACE }],
    currentContext: "sa",
  });
  const folder = mkdtempSync(join(tmpdir(), "sa-"));
  const kubeconfigFile = join(folder, "kubeconfig");
  writeFileSync(kubeconfigFile, kubeconfigYaml(asController));
  return { asController, folder, kubeconfigFile };
}

/** Every rule of the Roles and ClusterRoles among `objects`. */
function rulesOf(objects: readonly KubernetesObject[]): Array<Record<string, string[]>> {
  return objects
    .filter((o) => o.kind === "ClusterRole" || o.kind === "Role")
    .flatMap((o) => (o as unknown as { rules: Array<Record<string, string[]>> }).rules);
}

function expectNoWildcards(rules: ReturnType<typeof rulesOf>): void {
  for (const rule of rules) {
    for (const field of ["verbs", "resources", "apiGroups", "resourceNames"]) {
      expect(rule[field] ?? [], `${field} of ${JSON.stringify(rule)}`).not.toContain("*");
    }
  }
}

/** Applies every object with a server-side dry run, the Namespaces and CRDs for real first (later objects need them). */
async function expectToApplyCleanly(objects: readonly KubernetesObject[]): Promise<void> {
  for (const object of objects.filter(
    (o) => o.kind === "Namespace" || o.kind === "CustomResourceDefinition",
  )) {
    await apply(object);
  }
  for (const object of objects) await apply(object, "All");
}

/** The Deployment's fields these tests read. */
interface EngineDeployment {
  spec: {
    replicas: number;
    template: {
      spec: { securityContext: object; containers: Array<Record<string, unknown> & { args: string[] }> };
    };
  };
}

const deploymentIn = (objects: readonly KubernetesObject[]) =>
  objects.find((o) => o.kind === "Deployment") as unknown as EngineDeployment;

describe("the deployment manifests", () => {
  const all = [...manifests(join(root, "crds")), ...manifests(base)];

  it("grant no wildcard verb, resource or group", () => {
    const rules = rulesOf(all);
    expect(rules.length).toBeGreaterThan(5);
    expectNoWildcards(rules);
  });

  it("apply cleanly to a real API server (server-side dry run of every object)", async () => {
    await expectToApplyCleanly(all);
  });

  it("run 2 replicas with probes, limits and a locked-down, non-root security context", () => {
    const deployment = deploymentIn(all);
    expect(deployment.spec.replicas).toBe(2);
    const [container] = deployment.spec.template.spec.containers;
    expect(deployment.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(container).toMatchObject({
      startupProbe: { httpGet: { path: "/healthz" } },
      livenessProbe: { httpGet: { path: "/healthz" }, timeoutSeconds: 5 },
      readinessProbe: { httpGet: { path: "/readyz" } },
      securityContext: {
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      },
    });
    expect(container?.args).toEqual(expect.arrayContaining(["run", "--leader-elect"]));
  });

  it("give the controller enough rights for init and a whole Cluster lifecycle as its ServiceAccount", async () => {
    const { asController, folder, kubeconfigFile } = await asTheController();
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);

    // init as the ServiceAccount: CRDs and profiles.
    const admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    const init = spawnSync(
      process.execPath,
      [
        main,
        "init",
        "--provider-name=engine",
        "--environment=default",
        `--kubeconfig=${kubeconfigFile}`,
        // init loads the backend, which makes <state-dir>/<backend>; the default is ./.state/engine.
        `--state-dir=${join(folder, "state")}`,
      ],
      { encoding: "utf8", env: { ...process.env, POD_NAMESPACE: NAMESPACE } },
    );
    expect(init.status, init.stderr).toBe(0);
    await admin.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "sim", backend: "simulated" }),
    });
    await core.createNamespace({ body: { metadata: { name: "tenant" } } });

    // run as the ServiceAccount, with leader election: the whole lifecycle.
    const engine = new Engine({
      kubeConfig: asController,
      providerName: "engine",
      environment: "default",
      backend: new SimulatedBackend({ provisionDelayMs: 200, deleteDelayMs: 200 }),
      leaderElection: { namespace: NAMESPACE, name: "engine.engine.openmcp.cloud", identity: "test" },
    });
    await engine.start();
    try {
      await admin.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "tenant",
        body: aCluster({ name: "c", namespace: "tenant", profile: "default.engine.sim" }),
      });
      const read = () =>
        admin.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "tenant", name: "c" }).then(
          (c) => c as Cluster,
          () => undefined,
        );
      await eventually(async () => expect((await read())?.status?.phase).toBe("Ready"), { what: "c Ready" });
      const events = await core.listNamespacedEvent({ namespace: "tenant" });
      expect(events.items.map((e) => e.reason)).toContain("Ready");

      // AccessRequests: preparation and the provider side work with these rights too (the simulated
      // backend gives no admin access, so the request is Denied with a condition saying why).
      await admin.createNamespacedCustomObject({
        ...RESOURCES.AccessRequest,
        namespace: "tenant",
        body: anAccessRequest({
          name: "a",
          namespace: "tenant",
          clusterRef: { name: "c", namespace: "tenant" },
          token: { permissions: [] },
        }),
      });
      const readRequest = () =>
        admin.getNamespacedCustomObject({
          ...RESOURCES.AccessRequest,
          namespace: "tenant",
          name: "a",
        }) as Promise<{
          metadata: { labels?: Record<string, string> };
          status?: { phase?: string; conditions?: Array<{ type: string; message: string }> };
        }>;
      const request = await eventually(
        async () => satisfying(await readRequest(), (r) => r.status?.phase === "Denied"),
        { what: "AccessRequest a Denied" },
      );
      expect(request.metadata.labels).toMatchObject({ "clusters.openmcp.cloud/provider": "engine" });
      expect(request.status?.conditions).toContainEqual(
        expect.objectContaining({
          type: "AccessGranted",
          message: expect.stringContaining("backend simulated gives no access to its clusters"),
        }),
      );
      await admin.deleteNamespacedCustomObject({
        ...RESOURCES.AccessRequest,
        namespace: "tenant",
        name: "a",
      });
      await admin.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "tenant", name: "c" });
      await eventually(async () => expect(await read()).toBeUndefined(), { what: "c gone" });
    } finally {
      await engine.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("the sharded overlay (deploy/sharded, rendered by kustomize as kubectl apply -k does)", () => {
  const SHARD_RING = "engine.openmcp.cloud/shard-ring";
  let sharded: KubernetesObject[];
  let rendered: KubernetesObject[];

  beforeAll(() => {
    sharded = renderKustomization(join(root, "deploy", "sharded"));
    rendered = renderKustomization(base);
  });

  it("renders every object of the base, plus the shard ring's Role and RoleBinding, with no wildcard", () => {
    const ids = (objects: readonly KubernetesObject[]) =>
      objects.map((o) => `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name}`).sort();
    expect(ids(sharded)).toEqual(
      [
        ...ids(rendered),
        `Role ${NAMESPACE}/openmcp-engine-shard-ring`,
        `RoleBinding ${NAMESPACE}/openmcp-engine-shard-ring`,
      ].sort(),
    );
    expectNoWildcards(rulesOf(sharded));
  });

  it("applies cleanly to a real API server (server-side dry run of every object)", async () => {
    await expectToApplyCleanly(sharded);
  });

  it("runs 3 replicas with --sharding and leader election off, the base's container otherwise unchanged", () => {
    const deployment = deploymentIn(sharded);
    const [container] = deployment.spec.template.spec.containers;
    const [baseContainer] = deploymentIn(rendered).spec.template.spec.containers;
    expect(deployment.spec.replicas).toBe(3);
    expect(container?.args).toContain("--sharding");
    // run refuses --leader-elect beside --sharding; --no-leader-elect says so whatever $POD_NAMESPACE implies.
    expect(container?.args).toContain("--no-leader-elect");
    expect(container?.args).not.toContain("--leader-elect");
    expect(container?.env).toContainEqual(expect.objectContaining({ name: "POD_NAMESPACE" }));
    expect({ ...container, args: undefined }).toEqual({ ...baseContainer, args: undefined });
    expect(container?.args.filter((arg) => arg !== "--sharding" && arg !== "--no-leader-elect")).toEqual(
      baseContainer?.args.filter((arg) => arg !== "--leader-elect"),
    );
  });

  it("lets the ServiceAccount keep membership Leases in its namespace: get, list, create, update, delete (no watch: each replica lists its peers)", async () => {
    const { asController, folder } = await asTheController(sharded);
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const leases = asController.makeApiClient(CoordinationV1Api);
    const ring = { [SHARD_RING]: "engine" };
    const lease = (name: string) => ({ metadata: { name, labels: ring }, spec: { holderIdentity: name } });

    await leases.createNamespacedLease({ namespace: NAMESPACE, body: lease("replica-a") });
    await leases.createNamespacedLease({ namespace: NAMESPACE, body: lease("replica-b") });
    const listed = await leases.listNamespacedLease({
      namespace: NAMESPACE,
      labelSelector: `${SHARD_RING}=engine`,
    });
    expect(listed.items.map((l) => l.metadata?.name).sort()).toEqual(["replica-a", "replica-b"]);
    const own = await leases.readNamespacedLease({ namespace: NAMESPACE, name: "replica-a" });
    await leases.replaceNamespacedLease({
      namespace: NAMESPACE,
      name: "replica-a",
      body: { ...own, spec: { ...own.spec, renewTime: new V1MicroTime() } },
    });
    await leases.deleteNamespacedLease({ namespace: NAMESPACE, name: "replica-b" }); // expired peer
    await leases.deleteNamespacedLease({ namespace: NAMESPACE, name: "replica-a" });

    // Only there: a Lease in another namespace is forbidden.
    await expect(
      leases.createNamespacedLease({ namespace: "default", body: lease("elsewhere") }),
    ).rejects.toMatchObject({ code: 403 });
  });
});

describe("the Cluster API components (capi-components, for clusterctl)", () => {
  const components = capiComponents();

  it("label every object as infrastructure-openmcp-engine and run the controller with --capi", () => {
    for (const object of components) {
      expect(
        object.metadata?.labels?.["cluster.x-k8s.io/provider"],
        `${object.kind} ${object.metadata?.name}`,
      ).toBe("infrastructure-openmcp-engine");
    }
    const deployment = components.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    };
    expect(deployment.spec.template.spec.containers[0]?.args).toContain("--capi");
  });

  it("mark the infrastructure CRDs with the v1beta2 contract and aggregate read rights into CAPI's manager", () => {
    const crd = (name: string) =>
      components.find((o) => o.kind === "CustomResourceDefinition" && o.metadata?.name === name);
    for (const name of [
      "engineclusters.infrastructure.engine.openmcp.cloud",
      "engineclustertemplates.infrastructure.engine.openmcp.cloud",
    ]) {
      expect(crd(name)?.metadata?.labels?.["cluster.x-k8s.io/v1beta2"]).toBe("v1alpha1");
    }
    const aggregated = components.find(
      (o) =>
        o.kind === "ClusterRole" && o.metadata?.labels?.["cluster.x-k8s.io/aggregate-to-manager"] === "true",
    ) as unknown as { rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> };
    expect(aggregated.rules).toContainEqual(
      expect.objectContaining({
        apiGroups: ["infrastructure.engine.openmcp.cloud"],
        resources: expect.arrayContaining(["engineclusters"]),
        verbs: expect.arrayContaining(["get", "patch", "delete"]),
      }),
    );
    const metadata = loadAllYaml(readFileSync(join(root, "deploy", "capi", "metadata.yaml"), "utf8"))[0] as {
      kind: string;
      releaseSeries: Array<{ contract: string }>;
    };
    expect(metadata.kind).toBe("Metadata");
    expect(metadata.releaseSeries.map((series) => series.contract)).toContain("v1beta2");
  });

  it("apply cleanly to a real API server (server-side dry run)", async () => {
    for (const object of components.filter(
      (o) => o.kind === "Namespace" || o.kind === "CustomResourceDefinition",
    )) {
      await apply(object);
    }
    for (const object of components) await apply(object, "All");
  });
});

describe("the controller's rights on the Cluster API side", () => {
  it("suffice to serve an EngineCluster and an EngineControlPlane as its ServiceAccount (run --capi, Cluster API's CRDs installed)", async () => {
    await installCrds(controlPlane.kubeConfig, { directory: findCapiAssets().crdDirectory });
    for (const object of manifests(join(root, "crds"))) await apply(object);
    const { folder, kubeconfigFile } = await asTheController();
    const admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "capi-rbac" } } });
    await admin.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: "capi-sim", backend: "simulated" }),
    });
    const engine = startEngineCli(
      engineRunArgs(
        {
          provider: "rbac",
          environment: "default",
          kubeconfig: kubeconfigFile,
          stateDir: join(folder, "state"),
        },
        "--capi",
        "--backend-option=delay=200ms",
        "--no-leader-elect",
      ),
    );
    try {
      // The CAPI Cluster and the owner reference its controller would set (no CAPI manager here).
      const cluster = (await createCapiObject(admin, "capi-rbac", "Cluster", "w", {
        infrastructureRef: {
          apiGroup: "infrastructure.engine.openmcp.cloud",
          kind: "EngineCluster",
          name: "w",
        },
      })) as { metadata: { uid: string } };
      await admin.createNamespacedCustomObject({
        ...RESOURCES.EngineCluster,
        namespace: "capi-rbac",
        body: {
          apiVersion: "infrastructure.engine.openmcp.cloud/v1alpha1",
          kind: "EngineCluster",
          metadata: {
            name: "w",
            ownerReferences: [
              {
                apiVersion: "cluster.x-k8s.io/v1beta2",
                kind: "Cluster",
                name: "w",
                uid: cluster.metadata.uid,
              },
            ],
          },
          spec: { profile: "default.rbac.capi-sim" },
        },
      });
      const read = (resource: typeof RESOURCES.EngineCluster | typeof RESOURCES.ClusterEndpoint) =>
        admin.getNamespacedCustomObject({ ...resource, namespace: "capi-rbac", name: "w" }).then(
          (o) => o as { status?: { initialization?: { provisioned?: boolean } }; spec?: unknown },
          () => undefined,
        );
      await eventually(
        async () =>
          expect((await read(RESOURCES.EngineCluster))?.status?.initialization?.provisioned).toBe(true),
        { what: `EngineCluster w provisioned\n${engine.output()}` },
      );
      expect((await read(RESOURCES.ClusterEndpoint))?.spec).toMatchObject({
        cluster: "w",
        type: "apiserver",
      });
      expect(engine.output()).toContain("Cluster API side on");
      await admin.deleteNamespacedCustomObject({
        ...RESOURCES.EngineCluster,
        namespace: "capi-rbac",
        name: "w",
      });
      await eventually(async () => expect(await read(RESOURCES.EngineCluster)).toBeUndefined(), {
        what: "EngineCluster w gone",
      });
      expect(await read(RESOURCES.ClusterEndpoint)).toBeUndefined();

      // An EngineControlPlane likewise: its Cluster reports its infrastructure (as CAPI would), then the
      // control plane is built, initialized and published, and deleted again.
      const owner = (await createCapiObject(admin, "capi-rbac", "Cluster", "cp", {
        controlPlaneRef: {
          apiGroup: "controlplane.engine.openmcp.cloud",
          kind: "EngineControlPlane",
          name: "cp",
        },
      })) as { metadata: { uid: string } };
      await admin.patchNamespacedCustomObjectStatus({
        ...CAPI_CLUSTER_RESOURCE,
        namespace: "capi-rbac",
        name: "cp",
        body: [
          { op: "add", path: "/status", value: { initialization: { infrastructureProvisioned: true } } },
        ],
      });
      const controlPlaneResource = CONTROLPLANE_RESOURCES.EngineControlPlane;
      await admin.createNamespacedCustomObject({
        ...controlPlaneResource,
        namespace: "capi-rbac",
        body: {
          apiVersion: CONTROLPLANE_API_VERSION,
          kind: "EngineControlPlane",
          metadata: {
            name: "cp",
            ownerReferences: [
              {
                apiVersion: "cluster.x-k8s.io/v1beta2",
                kind: "Cluster",
                name: "cp",
                uid: owner.metadata.uid,
              },
            ],
          },
          spec: { profile: "default.rbac.capi-sim", version: "1.34" },
        },
      });
      const readControlPlane = () =>
        admin.getNamespacedCustomObject({ ...controlPlaneResource, namespace: "capi-rbac", name: "cp" }).then(
          (o) => o as { status?: { initialization?: { controlPlaneInitialized?: boolean } } },
          () => undefined,
        );
      await eventually(
        async () =>
          expect((await readControlPlane())?.status?.initialization?.controlPlaneInitialized).toBe(true),
        { what: `EngineControlPlane cp initialized\n${engine.output()}` },
      );
      const endpointOf = () =>
        admin
          .getNamespacedCustomObject({ ...RESOURCES.ClusterEndpoint, namespace: "capi-rbac", name: "cp" })
          .then(
            (o) => o,
            () => undefined,
          );
      expect(await endpointOf()).toBeDefined();
      await admin.deleteNamespacedCustomObject({
        ...controlPlaneResource,
        namespace: "capi-rbac",
        name: "cp",
      });
      await eventually(async () => expect(await readControlPlane()).toBeUndefined(), {
        what: "EngineControlPlane cp gone",
      });
      expect(await endpointOf()).toBeUndefined();
      expect(engine.output()).not.toMatch(/forbidden/i);
    } finally {
      engine.child.kill("SIGTERM");
      await new Promise((resolve) => engine.child.once("exit", resolve));
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("the image's runtime tree (hack/image/assemble.sh, as the Dockerfile runs it)", () => {
  it("holds compiled JavaScript and production dependencies only, and starts", () => {
    const tree = mkdtempSync(join(tmpdir(), "image-"));
    onTestFinished(() => rmSync(tree, { recursive: true, force: true }));
    // Compiles the whole tree and installs production dependencies: about a minute idle, 253 s at CI's load (its
    // first minutes, 2026-11-30); bounded below the test's timeout, so a hang fails saying so.
    execFileSync(join(root, "hack", "image", "assemble.sh"), [tree], { stdio: "pipe", timeout: 540_000 });
    expect(existsSync(join(tree, "node_modules", "@kubernetes", "client-node"))).toBe(true);
    expect(existsSync(join(tree, "node_modules", "vitest"))).toBe(false);
    expect(existsSync(join(tree, "node_modules", "node"))).toBe(false);
    expect(existsSync(join(tree, "test"))).toBe(false);
    expect(
      existsSync(join(tree, "src")),
      "compiled JavaScript only, no TypeScript to strip at start-up",
    ).toBe(false);
    const help = spawnSync(process.execPath, [join(tree, "dist", "cli", "main.js"), "run", "--help"], {
      encoding: "utf8",
    });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: openmcp-engine run");
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^RUN .*\\\n\s+hack\/image\/assemble\.sh \/app$/m); // the build stage runs exactly this script
    // The entrypoint runs the engine as uid 1000 however the Pod starts it (root only to keep a Docker socket's group).
    expect(dockerfile).toContain('ENTRYPOINT ["/usr/local/bin/openmcp-engine-entrypoint"]');
    const entrypoint = readFileSync(join(root, "hack", "image", "openmcp-engine-entrypoint"), "utf8");
    expect(entrypoint).toContain("main=/app/dist/cli/main.js");
    expect(entrypoint).toMatch(/exec setpriv --reuid=1000 --regid=1000 /);
    // The manifests run V8 with the limits the image sets (the ones the scale benchmark measures).
    const imageNodeOptions = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(dockerfile)?.[1];
    expect(imageNodeOptions).toMatch(/--max-old-space-size=\d+/);
    const deployment = manifests(join(root, "deploy", "base")).find(
      (o) => o.kind === "Deployment",
    ) as unknown as {
      spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
    };
    const env = deployment.spec.template.spec.containers[0]?.env ?? [];
    expect(env.find((variable) => variable.name === "NODE_OPTIONS")?.value).toBe(imageNodeOptions);
  }, 600_000);
});
