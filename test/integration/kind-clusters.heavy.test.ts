/**
 * The `kind` backend on a real Docker engine, driven by the engine on a real management API server: Clusters
 * become real kind clusters (the offline node image), admin access, token and OIDC AccessRequests proven
 * with their own credentials, deletion down to the containers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { type OidcIssuer, startOidcIssuer } from "../../src/dev/oidc-issuer.ts";
import { localNodeImageVersions, newestMinorKindCreates } from "../../src/providers/kind/cluster-config.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { moveObjects } from "../../src/runtime/move/move-objects.ts";
import {
  bearerClient,
  configMapTokenRequest,
  expectConfigMapAccessOnly,
  expectGroupReader,
  readersOidc,
  statusOf,
} from "../support/access-proofs.ts";
import { aCluster, anAccessRequest } from "../support/builders.ts";
import {
  containersNamed,
  containerToolchain,
  docker,
  freezeAPodContainer,
  kindNetworkGateway,
  run,
} from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type KindEngineWorld, startKindEngineWorld } from "../support/kind-engine-world.ts";
import { profileOffered } from "../support/profile-offered.ts";
import { stopAtFirstFailure } from "../support/stop-at-first-failure.ts";

const NS = "kind-test";
const PROFILE = "test.kind-test.kind";
const tools = containerToolchain();
let world: KindEngineWorld;
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let backend: ClusterBackend;
let cluster: Cluster;
/** The kind cluster made for Cluster `real`: named from its first uid, which a move back and forth changes. */
let kindName: string;
let admin: KubeConfig;
let issuer: OidcIssuer | undefined;

const read = async <T>(
  resource: { readonly group: string; readonly version: string; readonly plural: string },
  name: string,
): Promise<T | undefined> => {
  try {
    return (await custom.getNamespacedCustomObject({ ...resource, namespace: NS, name })) as T;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
};

const requestWhere = (name: string, what: string, wanted: (request: AccessRequest) => boolean) =>
  eventually(
    async () => satisfying(await read<AccessRequest>(RESOURCES.AccessRequest, name), (r) => !!r && wanted(r)),
    { what: `AccessRequest ${NS}/${name}: ${what}`, timeoutMs: 120_000, intervalMs: 500 },
  ) as Promise<AccessRequest>;

/** The kubeconfig in the request's Secret, loaded. */
async function kubeconfigFromSecret(name: string): Promise<{ kubeConfig: KubeConfig; text: string }> {
  const secret = await core.readNamespacedSecret({ namespace: NS, name: `${name}.kubeconfig` });
  const text = Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString("utf8");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(text);
  return { kubeConfig, text };
}

beforeAll(async () => {
  world = await startKindEngineWorld({
    namespace: NS,
    providerName: "kind-test",
    engine: {
      kindSettings: {
        AccessRequest: {
          timing: { tokenValidityMs: 600_000, pollMs: 1_000, retryMs: 1_000, resyncMs: 60_000 },
        },
        // Ready Clusters looked at every 10 s (the default, 2 min, is the same mechanism) to keep the test short.
        Cluster: { timing: { resyncMs: 10_000 } },
      },
    },
  });
  ({ controlPlane, custom, core, backend } = world);
}, 300_000);

afterAll(async () => {
  await issuer?.stop();
  await world?.stop();
}, 300_000);

describe("Clusters on real kind clusters", { timeout: 600_000 }, () => {
  stopAtFirstFailure();
  it("offers exactly the node images the Docker engine holds that its kind can create", async () => {
    const held = localNodeImageVersions(
      await docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}", "kindest/node"),
      newestMinorKindCreates(await run(tools.kind, ["version"])),
    );
    expect(held.map((v) => v.version)).toContain(tools.kubernetesVersion);
    const profile = await profileOffered(custom, PROFILE);
    expect(profile.spec.supportedVersions).toEqual(held);
  });

  it("makes a Cluster a real kind cluster: Ready, its endpoint serving, its node Ready at the version asked", async () => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({
        name: "real",
        namespace: NS,
        profile: PROFILE,
        tenancy: "Exclusive",
        version: tools.kubernetesVersion,
      }),
    });
    cluster = await eventually(
      async () =>
        satisfying(
          (await read<Cluster>(RESOURCES.Cluster, "real")) as Cluster,
          (c) => c?.status?.phase === "Ready",
        ),
      { what: "Cluster real Ready", timeoutMs: 400_000, intervalMs: 1_000 },
    );
    const name = kindClusterNameOf(cluster.metadata.name ?? "", cluster.metadata.uid ?? "");
    kindName = name;
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    expect((await run(tools.kind, ["get", "clusters"])).split("\n")).toContain(name);
    const access = await backend.adminAccess(world.targetOf(cluster));
    admin = new KubeConfig();
    admin.loadFromString(access?.kubeconfig ?? "");
    expect(cluster.status?.providerStatus).toBeDefined();
    const nodes = await admin.makeApiClient(CoreV1Api).listNode();
    expect(nodes.items.map((node) => node.status?.nodeInfo?.kubeletVersion)).toEqual([
      `v${tools.kubernetesVersion}`,
    ]);
    const ready = nodes.items[0]?.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.status).toBe("True");
    // Both endpoints, as openMCP's kind provider publishes them; the internal one is what a Pod of a sibling kind
    // cluster reaches: asked from a container on kind's Docker network, by name.
    const internal = `https://${name}-control-plane:6443`;
    expect(cluster.status?.endpoints).toEqual([
      { name: "apiserver-external", url: admin.getCurrentCluster()?.server },
      { name: "apiserver-internal", url: internal },
    ]);
    const version = await docker(
      ...[
        "run",
        "--rm",
        "--network",
        "kind",
        "--entrypoint",
        "curl",
        `kindest/node:v${tools.kubernetesVersion}`,
      ],
      ...["-sk", "--max-time", "20", `${internal}/version`],
    );
    expect(JSON.parse(version).gitVersion).toBe(`v${tools.kubernetesVersion}`);
  });

  it("grants a token AccessRequest whose kubeconfig does exactly what was asked on the kind cluster", async () => {
    const spec = configMapTokenRequest({ name: "real", namespace: NS });
    await custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      body: anAccessRequest({ name: "token", namespace: NS, ...spec }),
    });
    await requestWhere("token", "Granted", (r) => r.status?.phase === "Granted");
    const { kubeConfig, text } = await kubeconfigFromSecret("token");
    expect(kubeConfig.getCurrentCluster()?.server).toBe(admin.getCurrentCluster()?.server);
    expect(text).not.toContain("client-key-data"); // a token of its own, not the admin's certificate
    await expectConfigMapAccessOnly(kubeConfig);
  });

  it("grants an OIDC AccessRequest: the kind cluster's API server trusts the issuer, with the request's prefix", async () => {
    // kube-apiserver runs in the node container: it reaches this host at the kind network's gateway.
    issuer = await startOidcIssuer({ host: await kindNetworkGateway() });
    await custom.patchClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      name: "kind",
      body: [
        {
          op: "add",
          path: "/spec/settings",
          value: { oidcCertificateAuthority: issuer.certificateAuthority },
        },
      ],
    });
    await custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      body: anAccessRequest({
        name: "oidc",
        namespace: NS,
        clusterRef: { name: "real", namespace: NS },
        oidc: readersOidc(issuer.url, "kind-test"),
      }),
    });
    await requestWhere("oidc", "Granted", (r) => r.status?.phase === "Granted");
    const withToken = (token: string) => bearerClient(admin, token);
    const alice = withToken(
      await issuer.token({ audience: "kind-test", subject: "alice", groups: ["readers"] }),
    );
    // The node's kube-apiserver reloads the mounted authentication configuration by itself.
    await expectGroupReader(alice, "alice (group corp:readers) may list configmaps on the kind cluster", {
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
    const outsider = withToken(
      await issuer.token({ audience: "kind-test", subject: "bob", groups: ["others"] }),
    );
    expect(await statusOf(outsider.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);
    const wrongAudience = withToken(
      await issuer.token({ audience: "other", subject: "alice", groups: ["readers"] }),
    );
    expect(await statusOf(wrongAudience.listNamespacedConfigMap({ namespace: "default" }))).toBe(401);

    await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name: "oidc" });
    await eventually(
      async () => expect(await statusOf(alice.listNamespacedConfigMap({ namespace: "default" }))).toBe(401),
      {
        what: "the issuer no longer trusted once the request is gone",
        timeoutMs: 120_000,
        intervalMs: 1_000,
      },
    );
  });

  it("moves to another management cluster and back (openmcp-engine move): the same kind node container throughout, the token working all along", async () => {
    const second = await startControlPlane({ prepare: installingCrds("crds") });
    const secondState = mkdtempSync(join(tmpdir(), "kind-clusters-target-"));
    const log = createLogger({ write: (line) => world.logLines.push(line) });
    const secondEngine = new Engine({
      kubeConfig: second.kubeConfig,
      providerName: "kind-test",
      environment: "test",
      backend: await createBackend({
        stateDirectory: secondState,
        options: { kind: tools.kind, docker: tools.docker },
        log,
        clock: systemClock,
        readSecret: async () => undefined,
      }),
      log,
      kindSettings: {
        AccessRequest: {
          timing: { tokenValidityMs: 600_000, pollMs: 1_000, retryMs: 1_000, resyncMs: 60_000 },
        },
      },
    });
    await secondEngine.start();
    const secondCustom = second.kubeConfig.makeApiClient(CustomObjectsApi);
    try {
      await second.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
      const name = kindName;
      const node = `${name}-control-plane`;
      const containerBefore = await docker("inspect", "--format", "{{.Id}}", node);
      // A client of the granted token asks the kind cluster every half second while the Cluster moves.
      const { kubeConfig } = await kubeconfigFromSecret("token");
      const client = kubeConfig.makeApiClient(CoreV1Api);
      const failures: string[] = [];
      let answers = 0;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const code = await statusOf(client.listNamespacedConfigMap({ namespace: "default" }));
          if (code === 200) answers++;
          else failures.push(`${new Date().toISOString()}: ${code}`);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      })();
      const readyOn = (api: CustomObjectsApi, where: string) =>
        eventually(
          async () =>
            satisfying(
              (await api.getNamespacedCustomObject({
                ...RESOURCES.Cluster,
                namespace: NS,
                name: "real",
              })) as Cluster,
              (c) =>
                c.status?.phase === "Ready" &&
                c.metadata.annotations?.["engine.openmcp.cloud/handover"] === undefined,
            ),
          { what: `Cluster ${NS}/real Ready on the ${where}`, timeoutMs: 180_000, intervalMs: 1_000 },
        );
      const there = await moveObjects({
        from: controlPlane.kubeConfig,
        to: second.kubeConfig,
        namespaces: [NS],
      });
      expect(there.refused).toEqual([]);
      expect(there.moved).toMatchObject({ Cluster: 1, AccessRequest: 1, ProviderConfig: 1 });
      // The token is tried while the Cluster is the target's (some answers there, however loaded the machine is).
      const answered = (more: number, where: string) => {
        const from = answers;
        return eventually(() => answers + failures.length >= from + more, {
          what: `${more} more token answers ${where}`,
          timeoutMs: 60_000,
        });
      };
      const moved = await readyOn(secondCustom, "target");
      await answered(2, "while the Cluster is on the target");
      expect(moved.status?.endpoints).toEqual(cluster.status?.endpoints);
      expect(await read<Cluster>(RESOURCES.Cluster, "real")).toBeUndefined();
      const back = await moveObjects({
        from: second.kubeConfig,
        to: controlPlane.kubeConfig,
        namespaces: [NS],
      });
      expect(back.refused).toEqual([]);
      cluster = await readyOn(custom, "source again");
      await answered(2, "back on the source");
      polling = false;
      await poller;
      expect(failures).toEqual([]);
      expect(answers).toBeGreaterThanOrEqual(4);
      expect(await docker("inspect", "--format", "{{.Id}}", node)).toBe(containerBefore);
      expect(await containersNamed(name)).toEqual([node]);
      const request = await requestWhere(
        "token",
        "Granted after the moves",
        (r) => r.status?.phase === "Granted",
      );
      expect(request.status?.phase).toBe("Granted");
      // Still exactly what was asked: ConfigMaps yes, Secrets no.
      expect(await statusOf(client.listNamespacedConfigMap({ namespace: "default" }))).toBe(200);
      expect(await statusOf(client.listNamespacedSecret({ namespace: "default" }))).toBe(403);
    } finally {
      await secondEngine.stop();
      await second.stop();
      rmSync(secondState, { recursive: true, force: true });
    }
  });

  it("says so when its node container is stopped, and is Ready again once the container is started", async () => {
    const node = `${kindName}-control-plane`;
    const clusterReady = (c: Cluster | undefined) =>
      c?.status?.conditions?.find((x) => x.type === "ClusterReady");
    await docker("stop", node);
    try {
      const down = await eventually(
        async () =>
          satisfying(
            await read<Cluster>(RESOURCES.Cluster, "real"),
            (c) => clusterReady(c)?.status === "False",
          ),
        { what: "Cluster real: ClusterReady False", timeoutMs: 120_000, intervalMs: 1_000 },
      );
      expect(clusterReady(down)).toMatchObject({
        reason: "BackendNotReady",
        message: `the backend reports the cluster provisioning: its node containers do not run: ${node} (exited); start them again (docker start)`,
      });
      expect(down?.status?.phase).toBe("Progressing");
      expect(down?.status?.providerStatus?.state).toBe("ready"); // nothing ordered: the data is in the container
    } finally {
      await docker("start", node);
    }
    const back = await eventually(
      async () =>
        satisfying(await read<Cluster>(RESOURCES.Cluster, "real"), (c) => c?.status?.phase === "Ready"),
      { what: "Cluster real Ready again", timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(clusterReady(back)?.status).toBe("True");
    expect(await containersNamed(kindName)).toEqual([node]); // the same container, not a new cluster
  });

  it("says so when its node container is removed, and makes the kind cluster again", async () => {
    const node = `${kindName}-control-plane`;
    const before = await docker("inspect", "--format", "{{.Id}}", node);
    await docker("rm", "--force", node);
    // Gone: not ready, with the reason naming what the engine does (the backend reports no cluster).
    const down = await eventually(
      async () =>
        satisfying(
          await read<Cluster>(RESOURCES.Cluster, "real"),
          (c) => c?.status?.conditions?.find((x) => x.type === "ClusterReady")?.status === "False",
        ),
      {
        what: "Cluster real: ClusterReady False after its node was removed",
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );
    expect(down?.status?.phase).not.toBe("Ready");
    const back = await eventually(
      async () =>
        satisfying(await read<Cluster>(RESOURCES.Cluster, "real"), (c) => c?.status?.phase === "Ready"),
      {
        what: "Cluster real Ready again, its kind cluster made again",
        timeoutMs: 300_000,
        intervalMs: 1_000,
      },
    );
    expect(back?.status?.conditions?.find((x) => x.type === "ClusterReady")?.status).toBe("True");
    expect(await containersNamed(kindName)).toEqual([node]);
    expect(await docker("inspect", "--format", "{{.Id}}", node)).not.toBe(before); // a new node
  });

  it("deletes: the AccessRequests' grants, the kind cluster and its node container go, then the Cluster, even past a Pod's frozen cgroup", async () => {
    const name = kindName;
    expect(await containersNamed(name)).toEqual([`${name}-control-plane`]);
    // What a node killed while its runc starts a container leaves behind (hack/containers/runc-nested.sh).
    expect(await freezeAPodContainer(`${name}-control-plane`)).toMatch(/cri-containerd-.*\.scope$/);
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name: "token" });
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "real" });
    await eventually(async () => expect(await read(RESOURCES.Cluster, "real")).toBeUndefined(), {
      what: "Cluster real gone",
      timeoutMs: 180_000,
      intervalMs: 1_000,
    });
    expect(await containersNamed(name)).toEqual([]);
    expect((await run(tools.kind, ["get", "clusters"])).split("\n")).not.toContain(name);
    expect(await backend.observe(world.targetOf(cluster))).toEqual({ exists: false });
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
