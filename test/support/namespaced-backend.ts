/**
 * A tiny backend whose Cluster is a namespace on a real host API server, for AccessRequest tests on real
 * targets: its admin is a ServiceAccount bound to the ClusterRole `admin` in that namespace, and it says so
 * (contract 1.2, `AdminAccess.scope`). Per Cluster, the label {@link ADMIN_MODE_LABEL} gives it another
 * admin access, to try the engine against targets that are not what they claim:
 * - `scoped` (default): the namespace admin's token, with its scope: what a namespaced backend gives.
 * - `unscoped`: the same token claiming cluster-admin (no scope): the target refuses the engine.
 * - `host`: the host's own kubeconfig (cluster-admin on the whole host).
 * - `unreachable`: the host's kubeconfig pointed at a port nothing listens on.
 * Every `adminAccess` call is counted, by Cluster uid.
 */
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { parse, stringify } from "yaml";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { AdminAccess, ClusterBackend } from "../../src/api/backend-contract.ts";
import type { SupportedVersion } from "../../src/api/cluster-profile.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { isConflict, isNotFound } from "../../src/api/error-message.ts";
import type { Logger } from "../../src/api/logger.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { tokenKubeconfig } from "../../src/machines/access-request/kubeconfig.ts";
import type { RequeueTiming } from "../../src/machines/shared/machine-tags.ts";
import { aProviderConfig } from "./builders.ts";
import { startWorld, type World } from "./world.ts";

/** The Cluster label that picks the admin access the backend gives for it. */
export const ADMIN_MODE_LABEL = "test.openmcp.cloud/admin";

/** The admin accesses {@link ADMIN_MODE_LABEL} may pick. */
export type AdminMode = "scoped" | "unscoped" | "host" | "unreachable";

/** The name the backend gives itself; ProviderConfigs name it in `spec.backend`. */
export const NAMESPACED_BACKEND = "namespaced";

/** The namespace that is the cluster of `target`. */
export const tenantNamespace = (target: Pick<ClusterTarget, "name">): string => `tenant-${target.name}`;

/** The ServiceAccount that is a tenant's admin. */
const ADMIN = "admin";
const VERSION_ANNOTATION = "test.openmcp.cloud/version";

/** What {@link namespacedBackend} needs. */
export interface NamespacedBackendProps {
  /** The host cluster's admin kubeconfig (YAML). */
  readonly hostKubeconfig: string;
  /** A URL where nothing listens, for `unreachable` Clusters. */
  readonly unreachableServer: string;
}

/** The backend, and how often it was asked for admin access per Cluster uid. */
export interface NamespacedBackend extends ClusterBackend {
  readonly adminAccessCalls: Map<string, number>;
}

/** A backend that makes namespaces on the host its clusters. */
export function namespacedBackend(props: NamespacedBackendProps): NamespacedBackend {
  const host = new KubeConfig();
  host.loadFromString(props.hostKubeconfig);
  const core = host.makeApiClient(CoreV1Api);
  const rbac = host.makeApiClient(RbacAuthorizationV1Api);
  const cluster = host.getCurrentCluster();
  const adminAccessCalls = new Map<string, number>();
  const ignore = (test: (error: unknown) => boolean) => (error: unknown) => {
    if (!test(error)) throw error;
  };

  return {
    name: NAMESPACED_BACKEND,
    capabilities: { adminAccess: true, oidc: false },
    adminAccessCalls,
    supportedVersions: (config: ProviderConfig): readonly SupportedVersion[] =>
      config.spec.supportedVersions ?? [{ version: "1.33.3" }],
    traits: () => [],

    async observe(target): Promise<ClusterObservation> {
      try {
        const namespace = await core.readNamespace({ name: tenantNamespace(target) });
        await core.readNamespacedServiceAccount({ name: ADMIN, namespace: tenantNamespace(target) });
        const version = namespace.metadata?.annotations?.[VERSION_ANNOTATION] ?? "";
        return { exists: true, phase: "ready", version, endpoint: cluster?.server ?? "" };
      } catch (error) {
        if (isNotFound(error)) return { exists: false };
        throw error;
      }
    },

    async create(target, version) {
      const namespace = tenantNamespace(target);
      await core
        .createNamespace({
          body: { metadata: { name: namespace, annotations: { [VERSION_ANNOTATION]: version } } },
        })
        .catch(ignore(isConflict));
      await core
        .createNamespacedServiceAccount({ namespace, body: { metadata: { name: ADMIN } } })
        .catch(ignore(isConflict));
      await rbac
        .createNamespacedRoleBinding({
          namespace,
          body: {
            metadata: { name: ADMIN },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
            subjects: [{ kind: "ServiceAccount", name: ADMIN, namespace }],
          },
        })
        .catch(ignore(isConflict));
    },

    async update() {},

    async delete(target) {
      await core.deleteNamespace({ name: tenantNamespace(target) }).catch(ignore(isNotFound));
    },

    async adminAccess(target): Promise<AdminAccess | undefined> {
      adminAccessCalls.set(target.uid, (adminAccessCalls.get(target.uid) ?? 0) + 1);
      const mode = (target.labels?.[ADMIN_MODE_LABEL] ?? "scoped") as AdminMode;
      if (mode === "host") return { kubeconfig: props.hostKubeconfig };
      if (mode === "unreachable") {
        const config = parse(props.hostKubeconfig) as { clusters: { cluster: { server: string } }[] };
        for (const entry of config.clusters) entry.cluster.server = props.unreachableServer;
        return { kubeconfig: stringify(config) };
      }
      const namespace = tenantNamespace(target);
      const review = await core.createNamespacedServiceAccountToken({
        name: ADMIN,
        namespace,
        body: { spec: { audiences: [], expirationSeconds: 3_600 } },
      });
      const kubeconfig = tokenKubeconfig({
        server: cluster?.server ?? "",
        certificateAuthorityData: cluster?.caData ?? "",
        token: review.status?.token ?? "",
        clusterName: namespace,
        userName: ADMIN,
      });
      return mode === "unscoped"
        ? { kubeconfig }
        : { kubeconfig, scope: { namespaces: [namespace], accessNamespace: namespace } };
    },
  };
}

/** What {@link startTenantWorld} needs. */
export interface TenantWorldProps<B extends ClusterBackend> {
  /** The engine's provider name. */
  readonly provider: string;
  /** The namespace the tests' Clusters and AccessRequests go in (made here). */
  readonly namespace: string;
  /** The ProviderConfig made for the backend. */
  readonly providerConfig: string;
  /** The backend, made once the API server (which is also its host) is up. */
  readonly backend: (world: World) => B | Promise<B>;
  readonly timing?: RequeueTiming;
  readonly log?: Logger;
}

/** A world whose engine serves a namespaced backend's tenants, with a client of its core API. */
export interface TenantWorld<B extends ClusterBackend> {
  readonly world: World;
  readonly core: CoreV1Api;
  readonly backend: B;
}

/**
 * A world for the tenants of a namespaced backend, on one API server that is both management cluster and host:
 * the namespace made, the engine started on the backend, and a ProviderConfig for it. AccessRequests rotate less
 * often than a whole file runs, so admin access is asked once per Cluster.
 */
export async function startTenantWorld<B extends ClusterBackend>(
  props: TenantWorldProps<B>,
): Promise<TenantWorld<B>> {
  const world = await startWorld({
    provider: props.provider,
    engine: false,
    ...(props.timing ? { timing: props.timing } : {}),
  });
  try {
    const core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: props.namespace } } });
    const backend = await props.backend(world);
    await world.startEngine({
      backend,
      ...(props.log ? { log: props.log } : {}),
      kindSettings: {
        AccessRequest: { timing: { tokenValidityMs: 600_000, pollMs: 500, retryMs: 500, resyncMs: 600_000 } },
      },
    });
    await world.custom.createClusterCustomObject({
      ...RESOURCES.ProviderConfig,
      body: aProviderConfig({ name: props.providerConfig, backend: backend.name }),
    });
    return { world, core, backend };
  } catch (error) {
    // The caller never gets the world to stop: stopped here.
    await world.stop().catch(() => {});
    throw error;
  }
}
