/**
 * The conformance kit proves admin access on a real API server: it passes a backend whose admin kubeconfig is
 * what it declares (cluster-admin, or admin of its scope's namespaces), and fails — naming what failed — one whose
 * kubeconfig does not authenticate, one that may do less than it declares, and one whose server cannot be reached
 * (unless the kit is told the clusters are stand-ins). Its uids differ between kit calls.
 */
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { AdminAccess, AdminScope, BackendFactory } from "../../src/api/backend-contract.ts";
import { kubeconfigYaml } from "../../src/controlplane/control-plane.ts";
import { ConformanceError, checkBackendConformance } from "../../src/providers/conformance.ts";
import { startTestApiServer, type TestApiServer } from "../../src/testing.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import { bearerKubeConfig } from "../support/access-proofs.ts";
import { serviceAccountToken } from "../support/service-account-token.ts";

let api: TestApiServer;
beforeAll(async () => {
  api = await startTestApiServer();
  const core = api.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["tenant-a", "tenant-b", "robots"])
    await core.createNamespace({ body: { metadata: { name } } });
});
afterAll(async () => {
  await api?.stop();
});

/** A kubeconfig for ServiceAccount `robots/<name>`, bound to ClusterRole `role` cluster-wide or in `namespace`. */
async function robotKubeconfig(name: string, role: string, namespace?: string): Promise<string> {
  const core = api.kubeConfig.makeApiClient(CoreV1Api);
  const rbac = api.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const token = await serviceAccountToken(core, "robots", name);
  const binding = {
    metadata: { name, ...(namespace ? { namespace } : {}) },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name, namespace: "robots" }],
  };
  if (namespace) await rbac.createNamespacedRoleBinding({ namespace, body: binding });
  else await rbac.createClusterRoleBinding({ body: binding });
  return tokenKubeconfig(api.server, token);
}

/** A kubeconfig for `server` (trusting the test API server's CA) that authenticates by `token`. */
const tokenKubeconfig = (server: string, token: string): string =>
  kubeconfigYaml(bearerKubeConfig(api.kubeConfig, token, server));

/**
 * A backend whose every cluster is one API server at `endpoint` (made at once, kept per state folder so a restart
 * finds it), giving `access` as its admin access. The uids it was asked about are collected in `uids`.
 */
function oneServerBackend(
  endpoint: string,
  access: () => AdminAccess,
  uids = new Set<string>(),
): BackendFactory {
  const clusters = new Map<string, Set<string>>();
  return ({ stateDirectory }) => {
    const held = clusters.get(stateDirectory) ?? new Set<string>();
    clusters.set(stateDirectory, held);
    const observation = (target: ClusterTarget): ClusterObservation =>
      held.has(target.uid)
        ? { exists: true, phase: "ready", version: "1.35.1", endpoint }
        : { exists: false };
    return {
      name: "one-server",
      capabilities: { adminAccess: true, oidc: false },
      supportedVersions: () => [{ version: "1.35.1" }],
      traits: () => [],
      observe: async (target) => {
        uids.add(target.uid);
        return observation(target);
      },
      create: async (target) => {
        held.add(target.uid);
      },
      update: async () => {},
      delete: async (target) => {
        held.delete(target.uid);
      },
      adminAccess: async (target) => (held.has(target.uid) ? access() : undefined),
    };
  };
}

const kitFailure = (factory: BackendFactory, verifyAdminAccess?: boolean) =>
  checkBackendConformance(factory, {
    numRuns: 3,
    readyTimeoutMs: 5_000,
    ...(verifyAdminAccess === undefined ? {} : { verifyAdminAccess }),
  }).then(
    () => undefined,
    (error: unknown) => error,
  );

describe("the conformance kit proves admin access", () => {
  it("passes a backend whose admin kubeconfig is cluster-admin, as it declares", async () => {
    const failure = await kitFailure(oneServerBackend(api.server, () => ({ kubeconfig: api.kubeconfig })));
    expect(failure).toBeUndefined();
  }, 120_000);

  it("fails a backend whose admin kubeconfig does not authenticate, saying so", async () => {
    const failure = await kitFailure(
      oneServerBackend(api.server, () => ({ kubeconfig: tokenKubeconfig(api.server, "not-a-token") })),
    );
    expect(failure).toBeInstanceOf(ConformanceError);
    const message = (failure as Error).message;
    expect(message).toContain("the backend breaks the contract — admin access works: adminAccess(c0)");
    expect(message).toContain(`the admin kubeconfig does not authenticate at ${api.server}`);
    expect(message).toContain("401 Unauthorized");
    expect(message).not.toContain("not-a-token");
  }, 120_000);

  it("fails a backend that declares cluster-admin but gives a kubeconfig that may only read", async () => {
    const kubeconfig = await robotKubeconfig("reader", "view");
    const failure = await kitFailure(oneServerBackend(api.server, () => ({ kubeconfig })));
    expect(failure).toBeInstanceOf(ConformanceError);
    const message = (failure as Error).message;
    expect(message).toContain(
      "the admin kubeconfig (user system:serviceaccount:robots:reader) at " +
        `${api.server} is declared cluster-admin (no scope) but may not create clusterroles.rbac.authorization.k8s.io cluster-wide`,
    );
    expect(message).toContain("create serviceaccounts/token in every namespace");
  }, 120_000);

  it("passes a namespaced admin that may do what its scope declares, and fails one declaring a namespace it is not admin of", async () => {
    const kubeconfig = await robotKubeconfig("tenant", "admin", "tenant-a");
    const scoped = (scope: AdminScope) => oneServerBackend(api.server, () => ({ kubeconfig, scope }));
    expect(
      await kitFailure(scoped({ namespaces: ["tenant-a"], accessNamespace: "tenant-a" })),
    ).toBeUndefined();

    const failure = await kitFailure(
      scoped({ namespaces: ["tenant-a", "tenant-b"], accessNamespace: "tenant-a" }),
    );
    expect(failure).toBeInstanceOf(ConformanceError);
    const message = (failure as Error).message;
    expect(message).toContain(
      'is declared admin of namespaces tenant-a, tenant-b (its scope) but may not create roles.rbac.authorization.k8s.io in namespace "tenant-b"',
    );
    expect(message).not.toContain('in namespace "tenant-a"');

    const outside = await kitFailure(scoped({ namespaces: ["tenant-a"], accessNamespace: "openmcp-access" }));
    expect((outside as Error).message).toContain(
      'scope.accessNamespace "openmcp-access" is not one of scope.namespaces (tenant-a)',
    );
  }, 180_000);

  it("fails a backend whose admin kubeconfig reaches no server, unless told its clusters are stand-ins", async () => {
    const [port] = await freePorts(1); // nothing listens there
    const nowhere = `https://127.0.0.1:${port}`;
    const factory = oneServerBackend(nowhere, () => ({ kubeconfig: tokenKubeconfig(nowhere, "t") }));
    const failure = await kitFailure(factory);
    expect(failure).toBeInstanceOf(ConformanceError);
    expect((failure as Error).message).toMatch(
      new RegExp(
        `the admin kubeconfig does not authenticate at ${nowhere} \\(SelfSubjectReview: .*ECONNREFUSED`,
      ),
    );
    expect((failure as Error).message).toContain("verifyAdminAccess: false");
    expect(await kitFailure(factory, false)).toBeUndefined();
  }, 120_000);
});

describe("the conformance kit's uids", () => {
  it("differ between kit calls, so one call's leftovers never meet the next call's clusters", async () => {
    const first = new Set<string>();
    const second = new Set<string>();
    const access = () => ({ kubeconfig: api.kubeconfig });
    await checkBackendConformance(oneServerBackend(api.server, access, first), { numRuns: 2 });
    await checkBackendConformance(oneServerBackend(api.server, access, second), { numRuns: 2 });
    expect(first.size).toBeGreaterThan(0);
    expect(second.size).toBeGreaterThan(0);
    expect([...first].filter((uid) => second.has(uid))).toEqual([]);
    for (const uid of [...first, ...second])
      expect(uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4000-8000-\d{12}$/);
  }, 120_000);
});
