/**
 * The namespaced example backend (examples/namespace-clusters: a Cluster is a namespace on a host, its admin a
 * ServiceAccount that is `admin` there) on a real API server from `openmcp-engine/testing`: it passes the
 * conformance kit, which proves its scoped admin access works; its host comes from a backend option or a Secret
 * (the kit's settings reaching readOffer); a namespace missing its admin is reported incomplete and repaired by
 * create; and a tenant's kubeconfig has no rights beyond its namespace.
 */
import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as namespaceClusters from "../../examples/namespace-clusters/namespace-backend.ts";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { BackendContext, ClusterBackend } from "../../src/api/backend-contract.ts";
import { systemClock } from "../../src/api/clock.ts";
import { silentLogger } from "../../src/api/logger.ts";
import { checkBackendConformance } from "../../src/providers/conformance.ts";
import { startTestApiServer, type TestApiServer } from "../../src/testing.ts";
import { aProviderConfig } from "../support/builders.ts";
import { observationWhere } from "../support/observation-where.ts";
import { checkConformanceTimed } from "../support/timed-conformance.ts";

const { createBackend, namespaceOf, NamespaceBackend } = namespaceClusters;
const LABEL = "namespace-clusters.openmcp.cloud/cluster-uid";

let host: TestApiServer;
beforeAll(async () => {
  host = await startTestApiServer();
});
afterAll(async () => {
  await host?.stop();
});

/** Namespace clusters still on the host (also those being deleted): after the kit, none. */
async function leftovers(): Promise<string[]> {
  const list = await host.kubeConfig.makeApiClient(CoreV1Api).listNamespace({ labelSelector: LABEL });
  return list.items.map((ns) => `namespace ${ns.metadata?.name}`);
}

const liveClusters = (backend: ClusterBackend) =>
  (backend as InstanceType<typeof NamespaceBackend>).liveClusters();

describe("the namespaced example backend", () => {
  it("runs on a host whose controllers fill the admin role and remove deleted namespaces", () => {
    expect(host.controllers).toBe(true);
  });

  it("passes the conformance kit, its scoped admin access proven on the host", async () => {
    await checkConformanceTimed("namespace-clusters", namespaceClusters, {
      numRuns: 5,
      maxCommands: 8,
      readyTimeoutMs: 60_000,
      context: { options: { kubeconfig: host.kubeconfigPath } },
      leftovers,
      liveClusters,
    });
  }, 600_000);

  it("passes with its host in a Secret named by the config's settings, which the kit gives readOffer", async () => {
    await checkBackendConformance(namespaceClusters, {
      numRuns: 2,
      maxCommands: 5,
      readyTimeoutMs: 60_000,
      settings: { kubeconfigSecretRef: { namespace: "hosts", name: "one" } },
      context: {
        readSecret: async (namespace, name, key) =>
          namespace === "hosts" && name === "one" && key === "kubeconfig" ? host.kubeconfig : undefined,
      },
      leftovers,
    });
  }, 600_000);
});

describe("a namespace cluster", () => {
  let backend: ClusterBackend;
  const target: ClusterTarget = {
    uid: "7d1f6a34-9b1e-4c55-8a0e-3e9f0c2b7a10",
    namespace: "tenants",
    name: "t1",
    tenancy: "Exclusive",
    profile: "default.demo.namespace-clusters",
    providerConfig: "namespace-clusters",
  };
  const namespace = namespaceOf(target.uid);
  const ready = async () =>
    observationWhere(backend, target, (o) => o.exists && o.phase === "ready", {
      what: `namespace cluster ${namespace} ready`,
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    const context: BackendContext = {
      stateDirectory: "/nonexistent",
      options: { kubeconfig: host.kubeconfigPath },
      log: silentLogger,
      clock: systemClock,
      readSecret: async () => undefined,
    };
    backend = await createBackend(context);
    const offer = await backend.readOffer?.(aProviderConfig({ name: "n", backend: "namespace-clusters" }));
    await backend.create(target, offer?.versions[0]?.version ?? "");
    await ready();
  });
  afterAll(async () => {
    await backend?.delete(target);
  });

  it.each([
    [
      "its ServiceAccount",
      "ServiceAccount cluster-admin",
      () =>
        host.kubeConfig
          .makeApiClient(CoreV1Api)
          .deleteNamespacedServiceAccount({ namespace, name: "cluster-admin" }),
    ],
    [
      "its admin RoleBinding",
      "RoleBinding cluster-admin",
      () =>
        host.kubeConfig
          .makeApiClient(RbacAuthorizationV1Api)
          .deleteNamespacedRoleBinding({ namespace, name: "cluster-admin" }),
    ],
  ])("is reported incomplete when %s is deleted by hand, and create repairs it", async (_, part, remove) => {
    await remove();
    const observed = await backend.observe(target);
    expect(observed).toMatchObject({
      exists: true,
      phase: "provisioning",
      incomplete: `${part} missing in namespace ${namespace} on the host`,
    });
    await backend.create(target, observed.exists ? observed.version : "");
    const repaired = await ready();
    expect(repaired).not.toHaveProperty("incomplete");
  });

  it("replaces an admin RoleBinding that binds another role (a roleRef cannot change)", async () => {
    const rbac = host.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteNamespacedRoleBinding({ namespace, name: "cluster-admin" });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "cluster-admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "ServiceAccount", name: "cluster-admin", namespace }],
      },
    });
    const observed = await backend.observe(target);
    expect(observed).toMatchObject({
      incomplete: `RoleBinding cluster-admin missing in namespace ${namespace} on the host`,
    });
    await backend.create(target, observed.exists ? observed.version : "");
    await ready();
    const binding = await rbac.readNamespacedRoleBinding({ namespace, name: "cluster-admin" });
    expect(binding.roleRef.name).toBe("admin");
  });

  it("gives its tenant a kubeconfig that is admin of its namespace and of nothing else", async () => {
    const access = await backend.adminAccess(target);
    expect(access?.scope).toEqual({ namespaces: [namespace], accessNamespace: namespace });
    const tenant = new KubeConfig();
    tenant.loadFromString(access?.kubeconfig ?? "");
    const authorization = tenant.makeApiClient(AuthorizationV1Api);
    const may = async (resourceAttributes: V1ResourceAttributes) =>
      (await authorization.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes } } })).status
        ?.allowed;
    const rbacGroup = "rbac.authorization.k8s.io";
    expect(await may({ verb: "create", group: rbacGroup, resource: "roles", namespace })).toBe(true);
    expect(await may({ verb: "create", resource: "serviceaccounts", subresource: "token", namespace })).toBe(
      true,
    );
    expect(await may({ verb: "create", group: rbacGroup, resource: "clusterroles" })).toBe(false);
    expect(await may({ verb: "create", group: rbacGroup, resource: "clusterrolebindings" })).toBe(false);
    expect(await may({ verb: "create", resource: "namespaces" })).toBe(false);
    expect(await may({ verb: "list", resource: "serviceaccounts" })).toBe(false);
    expect(await may({ verb: "create", group: rbacGroup, resource: "roles", namespace: "default" })).toBe(
      false,
    );
  });
});
