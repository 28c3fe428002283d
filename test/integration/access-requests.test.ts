/** AccessRequests proven on a real target cluster (local backend): exact rights, denial, rotation, cleanup, no leaks. */

import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AppsV1Api,
  CoreV1Api,
  type CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Secret,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest, AccessRequestSpec, OidcAccess } from "../../src/api/access-request.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { ACCESS_REQUEST_LABELS } from "../../src/api/constants/access-request.ts";
import { HIBERNATE_ANNOTATION } from "../../src/api/constants/hibernation.ts";
import { CLUSTERS_API_VERSION, LABELS, RESOURCES } from "../../src/api/constants.ts";
import { type OidcIssuer, startOidcIssuer } from "../../src/dev/oidc-issuer.ts";
import { ACCESS_OWNER_LABEL } from "../../src/machines/access-request/names.ts";
import { createBackend as createLocalBackend } from "../../src/providers/local.ts";
import { reuseConnections } from "../../src/runtime/api-server/connection-reuse.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import type { Engine } from "../../src/runtime/engine.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import {
  bearerClient,
  createConfigMap,
  expectGroupReader,
  expectStatuses,
  issuedKubeconfig,
  readersOidc,
  statusOf,
} from "../support/access-proofs.ts";
import { createAccessRequest } from "../support/access-requests.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aCluster, aClusterProfile, aProviderConfig, aTargetFor } from "../support/builders.ts";
import { clusterWhereOn } from "../support/cluster-where.ts";
import { expectCondition } from "../support/conditions.ts";
import { caughtUp } from "../support/engine-signals.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { processesMentioning } from "../support/processes.ts";
import { startWorld, type World } from "../support/world.ts";

const NS = "team";
let world: World;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let engine: Engine;
let backend: ClusterBackend;
let issuer: OidcIssuer;
let target: KubeConfig; // admin access to the target cluster, for checking what exists there
let clockOffsetMs = 0;
const logLines: string[] = [];

const readRequest = (name: string) =>
  custom.getNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name }).then(
    (r) => r as AccessRequest,
    () => undefined,
  );

async function createRequest(name: string, spec: AccessRequestSpec) {
  await createAccessRequest(custom, NS, name, spec);
}

/** The AccessRequest once `wanted` holds for it. */
const requestWhere = (name: string, what: string, wanted: (request: AccessRequest) => boolean) =>
  eventually(
    async () => {
      const request = await readRequest(name);
      if (!request) throw new Error(`AccessRequest ${NS}/${name} does not exist`);
      return satisfying(request, wanted);
    },
    { what: `AccessRequest ${NS}/${name}: ${what}`, timeoutMs: 60_000 },
  );

const waitForPhase = (name: string, phase: string) =>
  requestWhere(name, `phase ${phase}`, (request) => request.status?.phase === phase);

/** The engine has seen AccessRequest `name` as it is now and finished every reconcile: nothing more will come of it. */
const settled = (name: string) =>
  caughtUp(engine, engine.informers.of(CACHES.accessRequests), async () => {
    const request = await readRequest(name);
    if (!request) throw new Error(`AccessRequest ${NS}/${name} does not exist`);
    return [request];
  });

/** A client for the target cluster using the kubeconfig from the request's Secret. */
async function clientFromSecret(
  name: string,
): Promise<{ kubeConfig: KubeConfig; data: Record<string, string> }> {
  const secret = await core.readNamespacedSecret({ namespace: NS, name: `${name}.kubeconfig` });
  const data = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(data.kubeconfig ?? "");
  return { kubeConfig: reuseConnections(kubeConfig), data };
}

/** A data key of a Secret, decoded. */
const decoded = (secret: V1Secret, key: string) =>
  Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");

const stateDirectory = mkdtempSync(join(tmpdir(), "access-local-"));

/** A local backend on the test's state folder; its clusters outlive it unless `stopOnClose`. */
const localBackend = (stopOnClose: boolean) =>
  createLocalBackend(
    aBackendContext(
      stateDirectory,
      { stopOnClose: String(stopOnClose) },
      { log: createLogger({ write: () => {} }) },
    ),
  );

/** A controller process, as far as the engine is concerned: informers, queues, the backend. */
async function startEngine(): Promise<void> {
  backend = await localBackend(false);
  engine = await world.startEngine({
    backend,
    clock: { now: () => Date.now() + clockOffsetMs, schedule: systemClock.schedule },
    log: createLogger({ level: "debug", write: (line) => logLines.push(line) }),
    kindSettings: {
      AccessRequest: { timing: { tokenValidityMs: 600_000, pollMs: 500, retryMs: 500, resyncMs: 60_000 } },
    },
  });
}

beforeAll(async () => {
  issuer = await startOidcIssuer();
  world = await startWorld({ provider: "eng", engine: false });
  custom = world.custom;
  core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  await startEngine();
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    // The local backend's clusters trust OIDC issuers signed by this CA (the test issuer's).
    body: aProviderConfig({
      name: "acc",
      backend: "local",
      settings: { oidcCertificateAuthority: issuer.certificateAuthority },
    }),
  });
  await eventually(
    () => custom.getClusterCustomObject({ ...RESOURCES.ClusterProfile, name: "test.eng.acc" }),
    {
      what: "the profile test.eng.acc",
    },
  );
  await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: aCluster({ name: "target", namespace: NS, profile: "test.eng.acc" }),
  });
  const cluster = await eventually(
    async () =>
      satisfying(
        (await custom.getNamespacedCustomObject({
          ...RESOURCES.Cluster,
          namespace: NS,
          name: "target",
        })) as Cluster,
        (c) => c.status?.phase === "Ready",
      ),
    { what: "the target Cluster Ready", timeoutMs: 90_000 },
  );
  const admin = await backend.adminAccess(
    aTargetFor(cluster, { tenancy: "Shared", profile: "test.eng.acc", providerConfig: "acc" }),
  );
  target = new KubeConfig();
  target.loadFromString(admin?.kubeconfig ?? "");
}, 180_000);

afterAll(async () => {
  await world?.stop(); // its engines first (again, harmlessly, for one a test stopped)
  await (await localBackend(true)).close?.(); // adopts the clusters and stops them
  await issuer?.stop();
  await rm(stateDirectory, { recursive: true, force: true });
}, 120_000);

describe("token access", () => {
  const spec: AccessRequestSpec = {
    clusterRef: { name: "target", namespace: NS },
    token: {
      permissions: [
        {
          namespace: "apps",
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "create"] }],
        },
        { rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] }] },
      ],
      // A role that existed before the request.
      roleRefs: [{ kind: "ClusterRole", name: "deployment-reader", namespace: "apps" }],
    },
  };

  it("is prepared, granted, and gives exactly the requested rights on the target cluster", async () => {
    await target.makeApiClient(RbacAuthorizationV1Api).createClusterRole({
      body: {
        metadata: { name: "deployment-reader" },
        rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] }],
      },
    });
    await createRequest("reader", spec);
    const granted = await waitForPhase("reader", "Granted");
    expect(granted.metadata.labels).toMatchObject({
      [LABELS.provider]: "eng",
      [ACCESS_REQUEST_LABELS.profile]: "test.eng.acc",
    });
    expect(granted.status?.secretRef).toEqual({ name: "reader.kubeconfig" });
    const { kubeConfig, data } = await clientFromSecret("reader");
    expect(Number(data.expirationTimestamp) - Number(data.creationTimestamp)).toBeGreaterThanOrEqual(600);
    const asReader = kubeConfig.makeApiClient(CoreV1Api);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    await expectStatuses([
      // Requested: configmaps in apps (Role), namespaces (ClusterRole), and deployment-reader in apps (roleRef).
      [() => createConfigMap(asReader, "apps", "x"), 200],
      [() => asReader.listNamespacedConfigMap({ namespace: "apps" }), 200],
      [() => asReader.listNamespace(), 200],
      [() => apps.listNamespacedDeployment({ namespace: "apps" }), 200],
      // Not requested: 403.
      [() => asReader.listNamespacedSecret({ namespace: "apps" }), 403],
      [() => createConfigMap(asReader, "default", "x"), 403],
      [() => asReader.deleteNamespace({ name: "apps" }), 403],
      [() => kubeConfig.makeApiClient(RbacAuthorizationV1Api).listClusterRole(), 403],
    ]);
  }, 120_000);

  it("grants the built-in ClusterRole view by roleRef: its aggregated rules work (the target runs a controller-manager)", async () => {
    await createRequest("viewer", {
      clusterRef: { name: "target", namespace: NS },
      token: { roleRefs: [{ kind: "ClusterRole", name: "view" }] },
    });
    await waitForPhase("viewer", "Granted");
    const { kubeConfig } = await clientFromSecret("viewer");
    const asViewer = kubeConfig.makeApiClient(CoreV1Api);
    await expectStatuses([
      [() => asViewer.listNamespacedConfigMap({ namespace: "default" }), 200],
      [() => kubeConfig.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: "default" }), 200],
      [() => asViewer.listNamespacedSecret({ namespace: "default" }), 403],
      [() => createConfigMap(asViewer, "default", "x"), 403],
    ]);
    await world.remove(RESOURCES.AccessRequest, "viewer", NS);
  }, 120_000);

  it("recreates the Secret when someone deletes it, and renews the token at 80 % of its validity", async () => {
    const before = (await clientFromSecret("reader")).data;
    await core.deleteNamespacedSecret({ namespace: NS, name: "reader.kubeconfig" });
    const recreated = await eventually(() => clientFromSecret("reader"), { what: "the Secret again" });
    expect(recreated.data.kubeconfig).toBeTruthy();

    clockOffsetMs = 500_000; // 83 % of the 600 s validity has passed, as far as the engine can tell
    const key = `${NS}/reader`;
    engine.machine("AccessRequest").queue.add(key);
    const renewed = await eventually(
      async () => {
        const now = (await clientFromSecret("reader")).data;
        expect(now.creationTimestamp).not.toBe(recreated.data.creationTimestamp);
        return now;
      },
      { what: "a renewed token", timeoutMs: 60_000 },
    );
    clockOffsetMs = 0;
    expect(renewed.kubeconfig).not.toBe(before.kubeconfig);
    const asReader = (await clientFromSecret("reader")).kubeConfig.makeApiClient(CoreV1Api);
    expect(await statusOf(asReader.listNamespace())).toBe(200);
  }, 120_000);

  it("still renews after the controller restarted in between", async () => {
    const before = (await clientFromSecret("reader")).data;
    await engine.stop(); // the target cluster keeps running: the next backend instance adopts it
    // Meanwhile the token's whole validity passed (it was issued under an offset clock by the last test).
    clockOffsetMs = 1_200_000;
    try {
      await startEngine();
      const renewed = await eventually(
        async () => {
          const now = (await clientFromSecret("reader")).data;
          expect(now.creationTimestamp).not.toBe(before.creationTimestamp);
          return now;
        },
        { what: "a token renewed by the new controller", timeoutMs: 60_000 },
      );
      expect(renewed.kubeconfig).not.toBe(before.kubeconfig);
    } finally {
      clockOffsetMs = 0;
    }
  }, 120_000);

  it("renews keeping what others added to its Secret: an account runtime's keys, annotation and finalizer", async () => {
    const name = "reader.kubeconfig";
    // As a downstream account runtime renews kubeconfig Secrets: two keys, an annotation, a finalizer of its own.
    await core.patchNamespacedSecret(
      {
        namespace: NS,
        name,
        body: {
          metadata: {
            annotations: {
              "ocp.services.open-control-plane.io/credential-expires-at": "2026-12-01T00:00:00Z",
            },
            finalizers: ["account.openmcp.cloud/request"],
          },
          stringData: { token: "account-token", "mounted-kubeconfig": "account-kubeconfig" },
        },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const before = (await clientFromSecret("reader")).data;
    // The last test's token was issued at an offset of 1,200 s: 83 % of its 600 s validity has passed at 1,700 s.
    clockOffsetMs = 1_700_000;
    engine.machine("AccessRequest").queue.add(`${NS}/reader`);
    const renewed = await eventually(
      async () =>
        satisfying(
          await core.readNamespacedSecret({ namespace: NS, name }),
          (secret) => decoded(secret, "creationTimestamp") !== before.creationTimestamp,
        ),
      { what: "a renewed token", timeoutMs: 60_000 },
    );
    clockOffsetMs = 0;
    try {
      expect(decoded(renewed, "token")).toBe("account-token");
      expect(decoded(renewed, "mounted-kubeconfig")).toBe("account-kubeconfig");
      expect(
        renewed.metadata?.annotations?.["ocp.services.open-control-plane.io/credential-expires-at"],
      ).toBe("2026-12-01T00:00:00Z");
      expect(renewed.metadata?.finalizers).toEqual(["account.openmcp.cloud/request"]);
      expect(decoded(renewed, "kubeconfig")).not.toBe(before.kubeconfig);
    } finally {
      // The account runtime lets go of it.
      await core.patchNamespacedSecret(
        { namespace: NS, name, body: { metadata: { finalizers: null } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    }
  }, 120_000);

  it("on deletion removes everything it made, the old token stops working, and pre-existing roles stay", async () => {
    const { kubeConfig } = await clientFromSecret("reader");
    const request = await readRequest("reader");
    await world.remove(RESOURCES.AccessRequest, "reader", NS);
    await eventually(async () => expect(await readRequest("reader")).toBeUndefined(), {
      what: "the request gone",
      timeoutMs: 60_000,
    });
    const code = await statusOf(kubeConfig.makeApiClient(CoreV1Api).listNamespace());
    expect([401, 403]).toContain(code);
    const rbac = target.makeApiClient(RbacAuthorizationV1Api);
    const labelSelector = `${ACCESS_OWNER_LABEL}=${request?.metadata.uid}`;
    expect((await rbac.listRoleForAllNamespaces({ labelSelector })).items).toEqual([]);
    expect((await rbac.listRoleBindingForAllNamespaces({ labelSelector })).items).toEqual([]);
    expect((await rbac.listClusterRole({ labelSelector })).items).toEqual([]);
    expect((await rbac.listClusterRoleBinding({ labelSelector })).items).toEqual([]);
    expect(
      (await target.makeApiClient(CoreV1Api).listServiceAccountForAllNamespaces({ labelSelector })).items,
    ).toEqual([]);
    expect(await statusOf(rbac.readClusterRole({ name: "deployment-reader" }))).toBe(200);
    expect(await statusOf(core.readNamespacedSecret({ namespace: NS, name: "reader.kubeconfig" }))).toBe(404);
  }, 120_000);
});

describe("a deleted namespace (the management cluster runs a controller-manager)", () => {
  it("disappears with its Clusters and AccessRequests: their backend clusters and tokens are gone", async () => {
    const doomed = "doomed";
    await core.createNamespace({ body: { metadata: { name: doomed } } });
    const cluster = (await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: doomed,
      body: aCluster({ name: "short-lived", namespace: doomed, profile: "test.eng.acc" }),
    })) as Cluster;
    await createAccessRequest(custom, doomed, "visitor", {
      clusterRef: { name: "target", namespace: NS },
      token: {
        permissions: [{ rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }] }],
      },
    });
    const read = (resource: typeof RESOURCES.Cluster | typeof RESOURCES.AccessRequest, name: string) =>
      custom.getNamespacedCustomObject({ ...resource, namespace: doomed, name }).then(
        (o) => o as { status?: { phase?: string } },
        () => undefined,
      );
    await eventually(async () => (await read(RESOURCES.Cluster, "short-lived"))?.status?.phase === "Ready", {
      what: "Cluster doomed/short-lived Ready",
      timeoutMs: 90_000,
    });
    await eventually(
      async () => (await read(RESOURCES.AccessRequest, "visitor"))?.status?.phase === "Granted",
      {
        what: "AccessRequest doomed/visitor Granted",
      },
    );
    const { kubeConfig: visitor } = await issuedKubeconfig(core, doomed, "visitor.kubeconfig");
    expect(await statusOf(visitor.makeApiClient(CoreV1Api).listNamespace())).toBe(200);

    await core.deleteNamespace({ name: doomed });
    await eventually(async () => expect(await statusOf(core.readNamespace({ name: doomed }))).toBe(404), {
      what: "namespace doomed gone",
      timeoutMs: 120_000,
    });
    const target = aTargetFor(cluster, { tenancy: "Shared", profile: "test.eng.acc", providerConfig: "acc" });
    expect(await backend.observe(target)).toEqual({ exists: false });
    expect(await statusOf(visitor.makeApiClient(CoreV1Api).listNamespace())).toBe(401);
  }, 180_000);
});

describe("OIDC access (the local backend trusts the issuer)", () => {
  /** A client of the target cluster that presents `token` (what kubectl oidc-login would do). */
  const withToken = (token: string) => bearerClient(target, token);

  it("is granted: a token of the issuer for a user in the bound group can do what was granted, nothing else; revoked on delete", async () => {
    await createRequest("oidc", {
      clusterRef: { name: "target", namespace: NS },
      oidc: readersOidc(issuer.url, "engine-test", {
        subjects: [
          { kind: "User", name: "::root-of-corp" },
          { kind: "User", name: "::corp:carol" },
        ],
        roleRefs: [{ kind: "ClusterRole", name: "edit" }],
      }),
    });
    await waitForPhase("oidc", "Granted");
    const { data } = await clientFromSecret("oidc");
    expect(data.kubeconfig).toContain("oidc-login");
    expect(data.kubeconfig).toContain(issuer.url);

    const reader = withToken(
      await issuer.token({ audience: "engine-test", subject: "alice", groups: ["readers"] }),
    );
    // The API server reloads its authentication configuration within seconds.
    await expectGroupReader(reader, "alice (group corp:readers) may list configmaps");
    const outsider = withToken(
      await issuer.token({ audience: "engine-test", subject: "bob", groups: ["others"] }),
    );
    expect(await statusOf(outsider.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);
    // `::` binds the name as it is: "::corp:carol" is the user the API server makes of carol's token…
    const carol = withToken(await issuer.token({ audience: "engine-test", subject: "carol" }));
    expect(
      await statusOf(
        carol.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "c" } } }),
      ),
    ).toBe(200);
    // …and "::root-of-corp" is no user of this issuer, whose names all get the "corp:" prefix.
    const root = withToken(await issuer.token({ audience: "engine-test", subject: "root-of-corp" }));
    expect(
      await statusOf(
        root.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "r" } } }),
      ),
    ).toBe(403);
    const wrongAudience = withToken(
      await issuer.token({ audience: "someone-else", subject: "alice", groups: ["readers"] }),
    );
    expect(await statusOf(wrongAudience.listNamespacedConfigMap({ namespace: "default" }))).toBe(401);
    const stranger = await startOidcIssuer();
    try {
      const foreign = withToken(
        await stranger.token({ audience: "engine-test", subject: "alice", groups: ["readers"] }),
      );
      expect(await statusOf(foreign.listNamespacedConfigMap({ namespace: "default" }))).toBe(401);
    } finally {
      await stranger.stop();
    }

    await world.remove(RESOURCES.AccessRequest, "oidc", NS);
    await eventually(
      async () => expect(await statusOf(reader.listNamespacedConfigMap({ namespace: "default" }))).toBe(401),
      {
        what: "the issuer no longer trusted once the request is gone",
        timeoutMs: 60_000,
      },
    );
  }, 150_000);

  /**
   * An OIDC request on the target for `clientID` under provider name `name`, binding `subjects` to a ClusterRole;
   * `more` sets another issuer or the prefixes.
   */
  const oidcRequest = (
    name: string,
    clientID: string,
    subjects: { kind: string; name: string }[],
    role: string,
    more: Partial<Pick<OidcAccess, "issuer" | "usernamePrefix" | "groupsPrefix">> = {},
  ): AccessRequestSpec => ({
    clusterRef: { name: "target", namespace: NS },
    oidc: {
      name,
      issuer: issuer.url,
      clientID,
      roleBindings: [{ subjects, roleRefs: [{ kind: "ClusterRole", name: role }] }],
      ...more,
    },
  });
  const reload = { timeoutMs: 90_000 }; // kube-apiserver reloads its authentication file within a minute
  const configMap = (name: string) => ({ namespace: "default", body: { metadata: { name } } });

  it("serves two requests for one issuer with their own prefixes: a token's audience picks the prefix", async () => {
    await createRequest(
      "oidc-a",
      oidcRequest("team-a", "client-a", [{ kind: "Group", name: "readers" }], "view"),
    );
    await createRequest("oidc-b", oidcRequest("team-b", "client-b", [{ kind: "User", name: "bob" }], "edit"));
    await waitForPhase("oidc-a", "Granted");
    await waitForPhase("oidc-b", "Granted");

    const readerOfA = withToken(
      await issuer.token({ audience: "client-a", subject: "alice", groups: ["readers"] }),
    );
    const bobOfB = withToken(await issuer.token({ audience: "client-b", subject: "bob" }));
    await eventually(
      async () =>
        expect(await statusOf(readerOfA.listNamespacedConfigMap({ namespace: "default" }))).toBe(200),
      { what: "alice with audience client-a is team-a:alice in group team-a:readers", ...reload },
    );
    await eventually(
      async () => expect(await statusOf(bobOfB.createNamespacedConfigMap(configMap("by-bob")))).toBe(200),
      { what: "bob with audience client-b is team-b:bob", ...reload },
    );
    // The same people with the other audience are the other team's names, which have nothing here.
    const readerOfB = withToken(
      await issuer.token({ audience: "client-b", subject: "alice", groups: ["readers"] }),
    );
    expect(await statusOf(readerOfB.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);
    const bobOfA = withToken(await issuer.token({ audience: "client-a", subject: "bob" }));
    expect(await statusOf(bobOfA.createNamespacedConfigMap(configMap("by-bob-a")))).toBe(403);
  }, 240_000);

  it("refuses tokens that would name a system: user or group, even for a request without prefixes", async () => {
    await createRequest(
      "oidc-raw",
      oidcRequest("raw", "client-raw", [{ kind: "Group", name: "raw-readers" }], "view", {
        usernamePrefix: "",
        groupsPrefix: "",
      }),
    );
    await waitForPhase("oidc-raw", "Granted");
    const reader = withToken(
      await issuer.token({ audience: "client-raw", subject: "r", groups: ["raw-readers"] }),
    );
    await eventually(
      async () => expect(await statusOf(reader.listNamespacedConfigMap({ namespace: "default" }))).toBe(200),
      { what: "a token of client-raw in group raw-readers works", ...reload },
    );
    const masters = withToken(
      await issuer.token({ audience: "client-raw", subject: "r", groups: ["raw-readers", "system:masters"] }),
    );
    expect(await statusOf(masters.listNamespacedSecret({ namespace: "kube-system" }))).toBe(401);
    const system = withToken(
      await issuer.token({ audience: "client-raw", subject: "system:kube-scheduler" }),
    );
    expect(await statusOf(system.listNamespacedConfigMap({ namespace: "default" }))).toBe(401);
  }, 150_000);

  it("denies a request for the same issuer and client ID with other prefixes, naming the request it yields to", async () => {
    await createRequest(
      "oidc-clash",
      oidcRequest("clash", "client-a", [{ kind: "Group", name: "x" }], "view"),
    );
    const denied = await waitForPhase("oidc-clash", "Denied");
    expectCondition(denied, {
      type: "AccessGranted",
      reason: "Denied",
      message: expect.stringContaining(
        `client ID client-a is trusted on this cluster for AccessRequest ${NS}/oidc-a`,
      ),
    });
  }, 60_000);

  it("denies an issuer kube-apiserver would refuse, and OIDC keeps working for the requests before and after it", async () => {
    await createRequest(
      "oidc-plain",
      oidcRequest("plain", "client-plain", [{ kind: "Group", name: "readers" }], "view", {
        issuer: "http://127.0.0.1:1",
      }),
    );
    const denied = await waitForPhase("oidc-plain", "Denied");
    expectCondition(denied, {
      reason: "Denied",
      message: expect.stringContaining(
        'spec.oidc.issuer: OIDC issuer "http://127.0.0.1:1" is not an https:// URL',
      ),
    });
    // A request made after it is trusted (the file changed and kube-apiserver took it)…
    await createRequest(
      "oidc-late",
      oidcRequest("late", "client-late", [{ kind: "Group", name: "readers" }], "view"),
    );
    await waitForPhase("oidc-late", "Granted");
    const lateReader = withToken(
      await issuer.token({ audience: "client-late", subject: "l", groups: ["readers"] }),
    );
    await eventually(
      async () =>
        expect(await statusOf(lateReader.listNamespacedConfigMap({ namespace: "default" }))).toBe(200),
      { what: "a token for the request made after the invalid one works", ...reload },
    );
    // …and one made before keeps working.
    const readerOfA = withToken(
      await issuer.token({ audience: "client-a", subject: "alice", groups: ["readers"] }),
    );
    expect(await statusOf(readerOfA.listNamespacedConfigMap({ namespace: "default" }))).toBe(200);
    // Removing trust still takes effect with the invalid request in place.
    await world.remove(RESOURCES.AccessRequest, "oidc-late", NS);
    await eventually(
      async () =>
        expect(await statusOf(lateReader.listNamespacedConfigMap({ namespace: "default" }))).toBe(401),
      { what: "client-late no longer trusted once its request is gone", ...reload },
    );
  }, 300_000);
});

/** Log lines of the engine that mention `text` and `key`. */
const logCount = (text: string, key: string) =>
  logLines.filter((line) => line.includes(text) && line.includes(key)).length;

describe("a Granted request at rest", () => {
  it("runs no command and rewrites nothing when it is looked at again", async () => {
    await createRequest("stable", {
      clusterRef: { name: "target", namespace: NS },
      token: {
        permissions: [{ rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }] }],
        roleRefs: [{ kind: "ClusterRole", name: "view" }],
      },
    });
    await waitForPhase("stable", "Granted");
    await settled("stable");
    const key = `${NS}/stable`;
    const commands = logCount('"access command"', key);
    const secretVersion = (await core.readNamespacedSecret({ namespace: NS, name: "stable.kubeconfig" }))
      .metadata?.resourceVersion;
    const requestVersion = (await readRequest("stable"))?.metadata.resourceVersion;
    const looks = logCount('"reconciled"', key);
    // Positive signal: five more reconciles of this very request have finished.
    for (let i = 0; i < 5; i++) {
      const before = logCount('"reconciled"', key);
      engine.machine("AccessRequest").queue.add(key);
      await eventually(() => logCount('"reconciled"', key) > before, {
        what: `reconcile ${i + 1} of ${key}`,
      });
    }
    expect(logCount('"reconciled"', key)).toBeGreaterThanOrEqual(looks + 5);
    expect(logCount('"access command"', key)).toBe(commands);
    expect(
      (await core.readNamespacedSecret({ namespace: NS, name: "stable.kubeconfig" })).metadata
        ?.resourceVersion,
    ).toBe(secretVersion);
    expect((await readRequest("stable"))?.metadata.resourceVersion).toBe(requestVersion);
  }, 120_000);

  it("is Granted with a RoleMissing condition and a Warning while a referenced role does not exist, cleared once it does", async () => {
    await createRequest("early-bird", {
      clusterRef: { name: "target", namespace: NS },
      token: { roleRefs: [{ kind: "ClusterRole", name: "not-there-yet" }] },
    });
    const granted = await requestWhere("early-bird", "Granted with ReferencedRolesExist False", (request) =>
      Boolean(
        request.status?.phase === "Granted" &&
          request.status.conditions?.some((c) => c.type === "ReferencedRolesExist" && c.status === "False"),
      ),
    );
    expectCondition(granted, {
      type: "ReferencedRolesExist",
      status: "False",
      reason: "RoleMissing",
      message:
        "ClusterRole not-there-yet (bound by token.roleRefs[0]) does not exist: a binding to a missing role grants nothing until the role exists",
    });
    await eventually(
      async () =>
        (
          await core.listNamespacedEvent({ namespace: NS, fieldSelector: "involvedObject.name=early-bird" })
        ).items.some((e) => e.type === "Warning" && e.reason === "RoleMissing"),
      { what: "a RoleMissing Warning Event" },
    );
    const asBird = (await clientFromSecret("early-bird")).kubeConfig.makeApiClient(CoreV1Api);
    expect(await statusOf(asBird.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);

    await target.makeApiClient(RbacAuthorizationV1Api).createClusterRole({
      body: {
        metadata: { name: "not-there-yet" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }],
      },
    });
    // Roles on the target are not watched: the request looks again by itself, soon.
    const found = await requestWhere("early-bird", "ReferencedRolesExist True", (request) =>
      Boolean(
        request.status?.conditions?.some((c) => c.type === "ReferencedRolesExist" && c.status === "True"),
      ),
    );
    expect(found.status?.phase).toBe("Granted");
    expect(await statusOf(asBird.listNamespacedConfigMap({ namespace: "default" }))).toBe(200);
  }, 120_000);
});

describe("requests that cannot be served", () => {
  it("shows a missing namespace on the object, and is Granted once someone creates it", async () => {
    await createRequest("needs-ns", {
      clusterRef: { name: "target", namespace: NS },
      token: {
        permissions: [
          {
            namespace: "not-yet",
            disableAutomaticNamespaceCreation: true,
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }],
          },
        ],
      },
    });
    const waiting = await requestWhere("needs-ns", "a condition naming the missing namespace", (request) =>
      (request.status?.conditions ?? []).some((c) => c.status === "False" && c.message.includes("not-yet")),
    );
    expect(waiting.status?.phase).toBe("Pending");
    expectCondition(waiting, {
      type: "AccessGranted",
      status: "False",
      reason: "TargetError",
      message: 'the API server of Cluster team/target answered 404 NotFound: namespaces "not-yet" not found',
    });
    // Retried with backoff, told once: one Warning Event for the failure, however often it recurs.
    await eventually(
      () =>
        logLines.filter((line) => line.includes("reconcile failed") && line.includes("not-yet")).length >= 2,
      { what: "two failed attempts in the log" },
    );
    const warnings = (await core.listNamespacedEvent({ namespace: NS })).items.filter(
      (event) =>
        event.involvedObject.name === "needs-ns" &&
        event.type === "Warning" &&
        event.message?.includes("not-yet"),
    );
    expect(warnings).toHaveLength(1);
    // Nobody touches the request: the engine keeps retrying, and the namespace is all it needed.
    await target.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "not-yet" } } });
    await waitForPhase("needs-ns", "Granted");
  }, 120_000);

  it("denies a named permission whose Role exists and is not ours, creating nothing", async () => {
    const rbac = target.makeApiClient(RbacAuthorizationV1Api);
    await target.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "owned" } } });
    await rbac.createNamespacedRole({
      namespace: "owned",
      body: { metadata: { name: "precious" }, rules: [] },
    });
    await createRequest("taker", {
      clusterRef: { name: "target", namespace: NS },
      token: {
        permissions: [
          {
            name: "precious",
            namespace: "owned",
            rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["delete"] }],
          },
        ],
      },
    });
    const denied = await waitForPhase("taker", "Denied");
    expectCondition(denied, {
      type: "AccessGranted",
      status: "False",
      reason: "Denied",
      message: expect.stringContaining("precious"),
    });
    const role = await rbac.readNamespacedRole({ namespace: "owned", name: "precious" });
    expect(role.rules ?? []).toEqual([]);
    expect(
      (await rbac.listRoleForAllNamespaces({ labelSelector: `${ACCESS_OWNER_LABEL}=${denied.metadata.uid}` }))
        .items,
    ).toEqual([]);
  }, 60_000);

  it("reports an unknown Cluster on a condition and stays Pending, without a crash", async () => {
    await createRequest("lost", {
      clusterRef: { name: "nowhere", namespace: NS },
      token: { permissions: [] },
    });
    const pending = await requestWhere("lost", "a Prepared condition", (request) =>
      Boolean(request.status?.conditions?.some((c) => c.type === "Prepared")),
    );
    expect(pending.status?.phase).toBe("Pending");
    expectCondition(pending, {
      type: "Prepared",
      status: "False",
      reason: "InvalidReference",
      message: expect.stringContaining("nowhere"),
    });
  }, 60_000);

  it("waits for a ClusterRequest that is not Granted yet, saying so", async () => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.ClusterRequest,
      namespace: NS,
      body: {
        apiVersion: CLUSTERS_API_VERSION,
        kind: "ClusterRequest",
        metadata: { name: "wanting" },
        spec: { purpose: "test" },
      },
    });
    await createRequest("early", {
      requestRef: { name: "wanting", namespace: NS },
      token: { permissions: [] },
    });
    const waiting = await requestWhere("early", "a Prepared condition", (request) =>
      Boolean(request.status?.conditions?.some((c) => c.type === "Prepared")),
    );
    expectCondition(waiting, {
      type: "Prepared",
      status: "False",
      message: expect.stringContaining("is not Granted yet"),
    });
    expect(waiting.metadata.labels?.[LABELS.provider]).toBeUndefined();
  }, 60_000);

  it("leaves a request for another provider's cluster alone after preparing it", async () => {
    await custom.createClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      body: aClusterProfile({ provider: "other", config: "x", versions: [] }),
    });
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({ name: "theirs", namespace: NS, profile: "test.other.x" }),
    });
    await createRequest("elsewhere", {
      clusterRef: { name: "theirs", namespace: NS },
      token: { permissions: [] },
    });
    const prepared = await requestWhere("elsewhere", "the provider label", (request) =>
      Boolean(request.metadata.labels?.[LABELS.provider]),
    );
    expect(prepared.metadata.labels?.[LABELS.provider]).toBe("other");
    await settled("elsewhere"); // the provider side has looked at the labelled request
    const later = await readRequest("elsewhere");
    expect(later?.metadata.finalizers).toBeUndefined();
    expect(later?.status?.conditions?.map((c) => c.type)).toEqual(["Prepared"]); // nothing from the provider side
  }, 60_000);

  it("denies rules that make no sense, creating nothing", async () => {
    await createRequest("nonsense", {
      clusterRef: { name: "target", namespace: NS },
      token: {
        // The CRD cannot say this (a rule without apiGroups is fine for non-resource URLs): the machine denies it.
        permissions: [{ namespace: "apps", rules: [{ resources: ["pods"], verbs: ["get"] }] }],
      },
    });
    const denied = await waitForPhase("nonsense", "Denied");
    expect(JSON.stringify(denied.status?.conditions)).toContain("a resource rule needs apiGroups");
    const deniedEvents = async () =>
      (
        await core.listNamespacedEvent({ namespace: NS, fieldSelector: "involvedObject.name=nonsense" })
      ).items.filter((e) => e.reason === "Denied");
    await eventually(async () => (await deniedEvents()).length > 0, { what: "a Denied Event" });
    await settled("nonsense"); // the reconciles triggered by our own writes have come and gone
    expect(await deniedEvents()).toHaveLength(1); // told once, not per reconcile
    const labelSelector = `${ACCESS_OWNER_LABEL}=${denied.metadata.uid}`;
    expect(
      (await target.makeApiClient(CoreV1Api).listServiceAccountForAllNamespaces({ labelSelector })).items,
    ).toEqual([]);
  }, 60_000);

  it("never writes a token or a key to the logs, the Events or any status", async () => {
    const events = await core.listNamespacedEvent({ namespace: NS });
    const statuses = (await custom.listNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
    })) as { items: AccessRequest[] };
    const everything = [
      logLines.join("\n"),
      JSON.stringify(events.items.map((e) => e.message)),
      JSON.stringify(statuses.items.map((r) => r.status)),
    ].join("\n");
    expect(everything).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/); // a JWT
    expect(everything).not.toMatch(/BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)|client-key-data|token:/);
    expect(logLines.length).toBeGreaterThan(10);
  });
});

describe("a Cluster put to sleep and woken (the local backend hibernates)", () => {
  const readTarget = async () =>
    (await custom.getNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      name: "target",
    })) as Cluster;
  const askSleep = (value: string) =>
    custom.patchNamespacedCustomObject(
      {
        ...RESOURCES.Cluster,
        namespace: NS,
        name: "target",
        body: { metadata: { annotations: { [HIBERNATE_ANNOTATION]: value } } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  const clusterWhere = (what: string, wanted: (cluster: Cluster) => boolean) =>
    clusterWhereOn(custom, NS, "target", what, wanted, { timeoutMs: 90_000 });

  it("stops every process of it, keeps its endpoint, and a kubeconfig granted before works after it wakes", async () => {
    await createRequest("sleeper", {
      clusterRef: { name: "target", namespace: NS },
      token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }] }] },
    });
    await waitForPhase("sleeper", "Granted");
    const { kubeConfig } = await clientFromSecret("sleeper");
    expect((await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    const before = await readTarget();
    const folder = join(stateDirectory, "clusters", before.metadata.uid ?? "");
    expect(processesMentioning(folder).length).toBeGreaterThan(0);

    await askSleep("true");
    const asleep = await clusterWhere(
      "Cluster target hibernated",
      (c) => c.status?.providerStatus?.state === "hibernated",
    );
    expectCondition(asleep, { type: "ClusterReady", status: "False", reason: "Hibernated" });
    expectCondition(asleep, { type: "Hibernation", status: "True", reason: "Hibernated" });
    expect(asleep.status?.apiServer).toBe(before.status?.apiServer);
    expect(processesMentioning(folder)).toEqual([]); // nothing of it runs
    await expect(kubeConfig.makeApiClient(CoreV1Api).listNamespace()).rejects.toThrow();
    // The request says why its kubeconfig does not answer now, and stays Granted: nothing of it is taken away.
    const waiting = await requestWhere("sleeper", "ClusterReady False ClusterHibernated", (r) =>
      (r.status?.conditions ?? []).some((c) => c.type === "ClusterReady" && c.reason === "ClusterHibernated"),
    );
    expect(waiting.status?.phase).toBe("Granted");
    expect(JSON.stringify(waiting.status?.conditions)).toContain("Cluster team/target is asleep (hibernated");

    await askSleep("false");
    const awake = await clusterWhere("Cluster target Ready again", (c) => c.status?.phase === "Ready");
    expect(awake.status?.providerStatus?.state).toBe("ready");
    expect(awake.status?.apiServer).toBe(before.status?.apiServer);
    expectCondition(awake, { type: "Hibernation", status: "True", reason: "Awake" });
    // The same kubeconfig: same endpoint, same CA, its token still valid.
    expect((await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    const reasons = (
      await core.listNamespacedEvent({ namespace: NS, fieldSelector: "involvedObject.name=target" })
    ).items.map((event) => event.reason);
    // The last Normal Event of each round is recorded (a synchronous stop shows Hibernated, not Hibernating).
    expect(reasons).toEqual(expect.arrayContaining(["Hibernated", "Waking"]));
  }, 240_000);
});
