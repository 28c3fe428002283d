/**
 * AccessRequests on real targets that are not plain cluster-admin (a namespaced test backend on one real API
 * server): a target that refuses the engine, one that cannot be reached, changed role references, and a
 * backend whose admin access is namespaced.
 */
import { readFileSync } from "node:fs";
import {
  AuthorizationV1Api,
  CoreV1Api,
  type CustomObjectsApi,
  type KubeConfig,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccessRequest, AccessRequestSpec } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { explainAccessRequest } from "../../src/machines/access-request/explain.ts";
import { ACCESS_OWNER_LABEL, NAMESPACE_CREATOR_LABEL } from "../../src/machines/access-request/names.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import { issuedKubeconfig } from "../support/access-proofs.ts";
import { createAccessRequest } from "../support/access-requests.ts";
import { aCluster } from "../support/builders.ts";
import { conditionOf } from "../support/conditions.ts";
import { reconciles } from "../support/engine-signals.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import {
  ADMIN_MODE_LABEL,
  type AdminMode,
  type NamespacedBackend,
  namespacedBackend,
  startTenantWorld,
} from "../support/namespaced-backend.ts";
import { profileOffered } from "../support/profile-offered.ts";
import type { World } from "../support/world.ts";

const NS = "team";
const PROFILE = "test.eng.tenants";
let world: World;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let backend: NamespacedBackend;
let unreachablePort: number;
const logLines: string[] = [];

const readRequest = (name: string) =>
  custom
    .getNamespacedCustomObject({ ...RESOURCES.AccessRequest, namespace: NS, name })
    .then((r) => r as AccessRequest);

const createRequest = (name: string, spec: AccessRequestSpec) => createAccessRequest(custom, NS, name, spec);

/** The AccessRequest once `wanted` holds for it, within `timeoutMs`. */
const requestWhere = (
  name: string,
  what: string,
  wanted: (request: AccessRequest) => boolean,
  timeoutMs = 30_000,
) =>
  eventually(async () => satisfying(await readRequest(name), wanted), {
    what: `AccessRequest ${NS}/${name}: ${what}`,
    timeoutMs,
  });

/** The Warning Events on AccessRequest `name`. */
async function warningsOn(name: string) {
  const events = await core.listNamespacedEvent({
    namespace: NS,
    fieldSelector: `involvedObject.name=${name},involvedObject.kind=AccessRequest,type=Warning`,
  });
  return events.items;
}

/** A Cluster `name` of the namespaced backend whose admin access is `mode`, once Ready. */
async function readyCluster(name: string, mode: AdminMode): Promise<Cluster> {
  await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: aCluster({ name, namespace: NS, profile: PROFILE, labels: { [ADMIN_MODE_LABEL]: mode } }),
  });
  return eventually(
    async () =>
      satisfying(
        (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name })) as Cluster,
        (c) => c.status?.phase === "Ready",
      ),
    { what: `Cluster ${NS}/${name} Ready`, timeoutMs: 60_000 },
  );
}

const configMapReader: AccessRequestSpec["token"] = {
  permissions: [
    { namespace: "apps", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
  ],
};

beforeAll(async () => {
  [unreachablePort] = (await freePorts(1)) as [number];
  // The rotation window (resyncMs) is longer than the whole file: admin access is asked once per Cluster.
  ({ world, core, backend } = await startTenantWorld({
    provider: "eng",
    namespace: NS,
    providerConfig: "tenants",
    log: createLogger({ level: "debug", write: (line) => logLines.push(line) }),
    backend: (world) =>
      namespacedBackend({
        hostKubeconfig: readFileSync(world.controlPlane.kubeconfigPath, "utf8"),
        unreachableServer: `https://127.0.0.1:${unreachablePort}`,
      }),
  }));
  custom = world.custom;
  await profileOffered(custom, PROFILE);
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

describe("a target that refuses the engine", () => {
  it("shows the refusal on the request within 30 s: a False condition and a Warning Event in the API server's words", async () => {
    // The backend claims cluster-admin, but its kubeconfig's identity is admin of one namespace only.
    await readyCluster("refusing", "unscoped");
    await createRequest("refused", {
      clusterRef: { name: "refusing", namespace: NS },
      token: configMapReader,
    });
    const request = await requestWhere(
      "refused",
      "AccessGranted False (TargetRefused)",
      (r) => conditionOf(r, "AccessGranted")?.reason === "TargetRefused",
    );
    const granted = conditionOf(request, "AccessGranted");
    expect(granted?.status).toBe("False");
    expect(granted?.message).toMatch(
      /^the API server of Cluster team\/refusing refused the backend's admin access: 403 Forbidden: \S+ is forbidden: User "system:serviceaccount:tenant-refusing:admin" cannot list resource "\S+" in API group "\S*" at the cluster scope$/,
    );
    expect(request.status?.phase).toBe("Pending");
    // The Cluster is Ready: no stale "not Ready yet".
    expect(conditionOf(request, "ClusterReady")).toMatchObject({ status: "True", reason: "Ready" });
    const warnings = await eventually(
      async () => satisfying(await warningsOn("refused"), (events) => events.length > 0),
      { what: "a Warning Event on AccessRequest team/refused" },
    );
    // The target is read in parallel: the first refusal told may name another resource than the condition's last.
    expect(warnings[0]?.reason).toBe("TargetRefused");
    expect(warnings[0]?.message).toMatch(
      /^the API server of Cluster team\/refusing refused the backend's admin access: 403 Forbidden: \S+ is forbidden: User "system:serviceaccount:tenant-refusing:admin" cannot list resource "\S+" in API group "\S*" at the cluster scope$/,
    );
    expect(JSON.stringify([request.status, warnings])).not.toMatch(/Bearer|eyJ|BEGIN/);
    const explained = explainAccessRequest(request);
    expect(explained.why).toEqual([`the target cluster refuses the engine: ${granted?.message}`]);
  });
});

describe("a target that cannot be reached", () => {
  it("shows the cause (ECONNREFUSED and the address) on the request and in the log, never a bare `fetch failed`", async () => {
    await readyCluster("gone", "unreachable");
    await createRequest("unreached", { clusterRef: { name: "gone", namespace: NS }, token: configMapReader });
    const request = await requestWhere(
      "unreached",
      "AccessGranted False (TargetUnreachable)",
      (r) => conditionOf(r, "AccessGranted")?.reason === "TargetUnreachable",
    );
    const address = `127.0.0.1:${unreachablePort}`;
    expect(conditionOf(request, "AccessGranted")?.message).toBe(
      `the API server of Cluster team/gone at https://${address} cannot be reached: fetch failed: connect ECONNREFUSED ${address}`,
    );
    expect(conditionOf(request, "ClusterReady")).toMatchObject({ status: "True" });
    const warnings = await eventually(
      async () => satisfying(await warningsOn("unreached"), (events) => events.length > 0),
      { what: "a Warning Event on AccessRequest team/unreached" },
    );
    expect(warnings[0]?.reason).toBe("TargetUnreachable");
    expect(explainAccessRequest(request).why[0]).toMatch(/^the target cluster cannot be reached: /);
    const failures = logLines.filter((line) => line.includes(address));
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((line) => line.includes(`ECONNREFUSED ${address}`))).toBe(true);
    expect(logLines.filter((line) => /"error":"[^"]*fetch failed"/.test(line))).toEqual([]);
  });
});

describe("a change of the roles a request binds by reference", () => {
  it("replaces the binding (roleRef is immutable) and the new role's rights take effect", async () => {
    await readyCluster("whole", "host");
    const spec = (role: string): AccessRequestSpec => ({
      clusterRef: { name: "whole", namespace: NS },
      token: { roleRefs: [{ kind: "ClusterRole", name: role }] },
    });
    await createRequest("viewer", spec("view"));
    await requestWhere("viewer", "Granted", (r) => r.status?.phase === "Granted");
    expect(await mayCreateConfigMaps("viewer")).toBe(false);
    await custom.patchNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: NS,
      name: "viewer",
      body: [{ op: "replace", path: "/spec/token/roleRefs/0/name", value: "edit" }],
    });
    const granted = await requestWhere(
      "viewer",
      "Granted for generation 2",
      (r) => r.status?.phase === "Granted" && r.status.observedGeneration === 2,
    );
    expect(conditionOf(granted, "AccessGranted")).toMatchObject({ status: "True" });
    const bindings = await world.controlPlane.kubeConfig
      .makeApiClient(RbacAuthorizationV1Api)
      .listClusterRoleBinding({ labelSelector: `${ACCESS_OWNER_LABEL}=${granted.metadata.uid}` });
    expect(bindings.items.map((b) => b.roleRef.name)).toEqual(["edit"]);
    expect(await mayCreateConfigMaps("viewer")).toBe(true);
    expect(await warningsOn("viewer")).toEqual([]);
  });
});

/** Whether the kubeconfig in AccessRequest `name`'s Secret may create ConfigMaps in namespace default. */
async function mayCreateConfigMaps(name: string): Promise<boolean> {
  const review = await (await requestClient(name))
    .makeApiClient(AuthorizationV1Api)
    .createSelfSubjectAccessReview({
      body: {
        spec: { resourceAttributes: { verb: "create", resource: "configmaps", namespace: "default" } },
      },
    });
  return review.status?.allowed === true;
}

/** A client with the kubeconfig of AccessRequest `name`'s Secret. */
async function requestClient(name: string): Promise<KubeConfig> {
  return (await issuedKubeconfig(core, NS, `${name}.kubeconfig`)).kubeConfig;
}

describe("a backend whose admin access is namespaced", () => {
  it("grants a token for a Role in its namespace: the kubeconfig does exactly that, nothing cluster-wide, no namespace made", async () => {
    await readyCluster("tenant", "scoped");
    const tenant = "tenant-tenant";
    await createRequest("tenant-writer", {
      clusterRef: { name: "tenant", namespace: NS },
      token: {
        permissions: [
          {
            namespace: tenant,
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create"] }],
          },
        ],
      },
    });
    const granted = await requestWhere(
      "tenant-writer",
      "Granted",
      (r) => r.status?.phase === "Granted",
      60_000,
    );
    const client = await requestClient("tenant-writer");
    const may = (verb: string, resource: string, namespace?: string) =>
      client
        .makeApiClient(AuthorizationV1Api)
        .createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { verb, resource, ...(namespace ? { namespace } : {}) } } },
        })
        .then((review) => review.status?.allowed === true);
    expect(await may("create", "configmaps", tenant)).toBe(true);
    expect(await may("get", "configmaps", tenant)).toBe(true);
    expect(await may("delete", "configmaps", tenant)).toBe(false);
    expect(await may("get", "configmaps", "default")).toBe(false);
    expect(await may("list", "namespaces")).toBe(false);
    expect(await may("create", "clusterroles")).toBe(false);
    // It really works: a ConfigMap made with it.
    await client.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: tenant,
      body: { metadata: { name: "made-with-access" }, data: { a: "b" } },
    });
    // Its ServiceAccount lives in the scope's access namespace; no namespace was made for it.
    const uid = granted.metadata.uid ?? "";
    const accounts = await core.listNamespacedServiceAccount({
      namespace: tenant,
      labelSelector: `${ACCESS_OWNER_LABEL}=${uid}`,
    });
    expect(accounts.items).toHaveLength(1);
    expect((await core.listNamespace({ labelSelector: `${NAMESPACE_CREATOR_LABEL}=${uid}` })).items).toEqual(
      [],
    );

    await world.remove(RESOURCES.AccessRequest, "tenant-writer", NS);
    await eventually(
      async () =>
        (
          await core.listNamespacedServiceAccount({
            namespace: tenant,
            labelSelector: `${ACCESS_OWNER_LABEL}=${uid}`,
          })
        ).items.length === 0 &&
        (await readRequest("tenant-writer").then(
          () => false,
          () => true,
        )),
      { what: "the request gone and its ServiceAccount with it", timeoutMs: 30_000 },
    );
    expect((await core.readNamespace({ name: tenant })).metadata?.name).toBe(tenant);
  });

  it("denies a request for a ClusterRole with the reason OutsideAdminScope, naming the cluster-wide rule", async () => {
    await createRequest("tenant-wide", {
      clusterRef: { name: "tenant", namespace: NS },
      token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }] }] },
    });
    const denied = await requestWhere("tenant-wide", "Denied", (r) => r.status?.phase === "Denied");
    expect(conditionOf(denied, "AccessGranted")).toMatchObject({
      status: "False",
      reason: "OutsideAdminScope",
      message: expect.stringContaining(
        "limited to namespace(s) tenant-tenant, so it cannot grant what token.permissions[0] asks for cluster-wide rules (a ClusterRole)",
      ),
    });
    const warnings = await eventually(
      async () => satisfying(await warningsOn("tenant-wide"), (events) => events.length > 0),
      { what: "a Warning Event on AccessRequest team/tenant-wide" },
    );
    expect(warnings[0]?.reason).toBe("OutsideAdminScope");
    expect(explainAccessRequest(denied).why[0]).toMatch(/^denied: the backend's admin access/);
  });
});

describe("namespaces a cluster-admin grant needs", () => {
  it("are made only when missing, remembered, and removed on revoke only when the engine made them", async () => {
    await readyCluster("whole-ns", "host");
    const rules = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }];
    await createRequest("in-two", {
      clusterRef: { name: "whole-ns", namespace: NS },
      token: {
        permissions: [
          { namespace: "made-for-access", rules },
          { namespace: "default", rules },
        ],
      },
    });
    const granted = await requestWhere("in-two", "Granted", (r) => r.status?.phase === "Granted");
    const uid = granted.metadata.uid ?? "";
    expect(
      (await core.readNamespace({ name: "made-for-access" })).metadata?.labels?.[NAMESPACE_CREATOR_LABEL],
    ).toBe(uid);
    expect(
      (await core.readNamespace({ name: "default" })).metadata?.labels?.[NAMESPACE_CREATOR_LABEL],
    ).toBeUndefined();
    await world.remove(RESOURCES.AccessRequest, "in-two", NS);
    await eventually(
      async () =>
        core.readNamespace({ name: "made-for-access" }).then(
          (namespace) => namespace.metadata?.deletionTimestamp !== undefined,
          () => true,
        ),
      { what: "namespace made-for-access removed with the request", timeoutMs: 30_000 },
    );
    expect((await core.readNamespace({ name: "default" })).status?.phase).toBe("Active");
  });
});

describe("admin access, asked once per rotation window", () => {
  it("is asked of the backend once for a Cluster, however many reconciles of however many requests need it", async () => {
    const cluster = await readyCluster("shared-admin", "scoped");
    const before = await reconciles(world.engine.metrics, "accessrequest");
    const names = ["one", "two", "three"];
    await Promise.all(
      names.map((name) =>
        createRequest(`shared-${name}`, {
          clusterRef: { name: "shared-admin", namespace: NS },
          token: {
            permissions: [
              {
                namespace: "tenant-shared-admin",
                rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
              },
            ],
          },
        }),
      ),
    );
    for (const name of names)
      await requestWhere(`shared-${name}`, "Granted", (r) => r.status?.phase === "Granted");
    const made = (await reconciles(world.engine.metrics, "accessrequest")) - before;
    expect(made).toBeGreaterThanOrEqual(names.length * 2);
    expect(backend.adminAccessCalls.get(cluster.metadata.uid ?? "")).toBe(1);
  });
});
