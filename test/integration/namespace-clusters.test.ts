/**
 * The namespaced example backend (examples/namespace-clusters) under the engine, on a real API server that is
 * both the management cluster and the host: a Cluster becomes a namespace and goes Ready, naming that namespace in its
 * status (and `explain` naming it); a token AccessRequest
 * is granted through its namespaced admin access, its kubeconfig doing exactly what was asked in the tenant's
 * namespace and nothing cluster-wide, with no cluster-wide rights given to the tenant; a request for cluster-wide
 * rights is Denied; and a tenant whose admin ServiceAccount was deleted by hand is repaired, the Cluster saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AuthenticationV1Api,
  CoreV1Api,
  type CustomObjectsApi,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackend, namespaceOf } from "../../examples/namespace-clusters/namespace-backend.ts";
import type { AccessRequest } from "../../src/api/access-request.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { explainReport } from "../../src/cli/explain.ts";
import { issuedKubeconfig, statusOf } from "../support/access-proofs.ts";
import { createAccessRequest } from "../support/access-requests.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aCluster } from "../support/builders.ts";
import { conditionOf } from "../support/conditions.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { startTenantWorld } from "../support/namespaced-backend.ts";
import type { World } from "../support/world.ts";

const NS = "tenants";
const PROFILE = "test.nc.shared";
let world: World;
let custom: CustomObjectsApi;
let core: CoreV1Api;
const stateDir = mkdtempSync(join(tmpdir(), "namespace-clusters-"));

const waitUntil = <T>(
  resource: (typeof RESOURCES)[keyof typeof RESOURCES],
  name: string,
  predicate: (object: T | undefined) => boolean,
) => world.waitForObject<T>(resource, name, predicate, { namespace: NS, timeoutMs: 60_000 });

beforeAll(async () => {
  // A Ready Cluster is looked at every 2 s, so a tenant broken by hand is found soon (nothing watches the host).
  ({ world, core } = await startTenantWorld({
    provider: "nc",
    namespace: NS,
    providerConfig: "shared",
    timing: { pollMs: 500, retryMs: 1_000, resyncMs: 2_000 },
    backend: (world) =>
      createBackend(aBackendContext(stateDir, { kubeconfig: world.controlPlane.kubeconfigPath })),
  }));
  custom = world.custom;
}, 120_000);

afterAll(async () => {
  await world?.stop();
  rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

describe("a namespace cluster under the engine", () => {
  let tenant = "";

  it("is Ready as a namespace on the host", async () => {
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NS,
      body: aCluster({ name: "acme", namespace: NS, profile: PROFILE }),
    });
    const cluster = await waitUntil<Cluster>(RESOURCES.Cluster, "acme", (c) => c?.status?.phase === "Ready");
    tenant = namespaceOf(cluster?.metadata.uid ?? "");
    expect((await core.readNamespace({ name: tenant })).metadata?.name).toBe(tenant);
  });

  it("names its tenant's namespace in its status, and explain says it", async () => {
    const cluster = await waitUntil<Cluster>(
      RESOURCES.Cluster,
      "acme",
      (c) => c?.status?.providerStatus?.tenantNamespaces !== undefined,
    );
    expect(cluster?.status?.providerStatus?.tenantNamespaces).toEqual([tenant]);
    const report = await explainReport(world.controlPlane.kubeConfig, "Cluster", NS, "acme");
    expect(report.explanation.why).toContain(
      `its backend grants admin of namespace ${tenant} only: its tenant works there (status.providerStatus.tenantNamespaces)`,
    );
  }, 90_000);

  it("grants a token for ConfigMaps in the tenant's namespace: exactly that, nothing cluster-wide, no rights given to the tenant", async () => {
    const clusterRolesBefore = (
      await world.controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api).listClusterRoleBinding()
    ).items.map((binding) => binding.metadata?.name);
    await createAccessRequest(custom, NS, "reader", {
      clusterRef: { name: "acme", namespace: NS },
      token: {
        permissions: [
          {
            namespace: tenant,
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "create"] }],
          },
        ],
      },
    });
    const request = await waitUntil<AccessRequest>(
      RESOURCES.AccessRequest,
      "reader",
      (r) => r?.status?.phase === "Granted",
    );
    expect(request?.status?.secretRef?.name).toBe("reader.kubeconfig");
    const { kubeConfig } = await issuedKubeconfig(core, NS, "reader.kubeconfig");
    const client = kubeConfig.makeApiClient(CoreV1Api);
    expect(
      await statusOf(
        client.createNamespacedConfigMap({ namespace: tenant, body: { metadata: { name: "t" } } }),
      ),
    ).toBe(200);
    expect(await statusOf(client.listNamespacedConfigMap({ namespace: tenant }))).toBe(200);
    expect(await statusOf(client.listNamespacedSecret({ namespace: tenant }))).toBe(403);
    expect(await statusOf(client.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);
    expect(await statusOf(client.listNamespace())).toBe(403);
    // The token's ServiceAccount lives in the tenant's namespace, not in a shared openmcp-access.
    const review = await kubeConfig.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toMatch(new RegExp(`^system:serviceaccount:${tenant}:`));
    expect(await statusOf(core.readNamespace({ name: "openmcp-access" }))).toBe(404);
    // No cluster-wide binding was made for anyone.
    const clusterRolesAfter = (
      await world.controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api).listClusterRoleBinding()
    ).items.map((binding) => binding.metadata?.name);
    expect(clusterRolesAfter).toEqual(clusterRolesBefore);
  });

  it("denies a request for cluster-wide rights, naming why", async () => {
    await createAccessRequest(custom, NS, "wide", {
      clusterRef: { name: "acme", namespace: NS },
      token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }] }] },
    });
    const request = await waitUntil<AccessRequest>(
      RESOURCES.AccessRequest,
      "wide",
      (r) => r?.status?.phase === "Denied",
    );
    expect(conditionOf(request, "AccessGranted")).toMatchObject({
      status: "False",
      reason: "OutsideAdminScope",
    });
  });

  it("is repaired when its admin ServiceAccount is deleted by hand, and says so on the Cluster", async () => {
    const accounts = await core.listNamespacedServiceAccount({ namespace: tenant });
    const admin = accounts.items.find((account) => account.metadata?.name === "cluster-admin");
    expect(admin, "the tenant's admin ServiceAccount").toBeDefined();
    await core.deleteNamespacedServiceAccount({ namespace: tenant, name: "cluster-admin" });
    // The engine orders create again and says why: a Warning Event Repairing naming what is missing.
    const events = await eventually(
      async () =>
        satisfying(
          (
            await core.listNamespacedEvent({
              namespace: NS,
              fieldSelector: "involvedObject.name=acme,involvedObject.kind=Cluster,reason=Repairing",
            })
          ).items,
          (items) => items.length > 0,
        ),
      { what: "a Repairing Event on Cluster acme", timeoutMs: 60_000 },
    );
    expect(events[0]?.type).toBe("Warning");
    expect(events[0]?.message).toContain("missing");
    const repaired = await waitUntil<Cluster>(
      RESOURCES.Cluster,
      "acme",
      (c) => c?.status?.phase === "Ready" && conditionOf(c, "ClusterReady")?.status === "True",
    );
    expect(repaired?.status?.phase).toBe("Ready");
    const again = await core.readNamespacedServiceAccount({ namespace: tenant, name: "cluster-admin" });
    expect(again.metadata?.uid).not.toBe(admin?.metadata?.uid);
  });
});
