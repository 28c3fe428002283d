/**
 * An example backend whose clusters are namespaces on one shared host cluster (the shape of vcluster-less
 * tenancy, Capsule, kcp workspaces): a Cluster is a namespace, its admin a ServiceAccount bound to the `admin`
 * ClusterRole in that namespace only. Its admin access is therefore namespaced (contract 1.2, `AdminAccess.scope`),
 * and `observe` reports a namespace whose ServiceAccount or RoleBinding went missing as `incomplete`, which
 * `create` repairs.
 *
 * The host: `--backend-option kubeconfig=<file>`, or per ProviderConfig `spec.settings.kubeconfigSecretRef`
 * (`{ namespace, name, key? }`, a Secret beside the engine holding a kubeconfig). The host needs nothing installed;
 * its kube-controller-manager fills the aggregated `admin` role and removes deleted namespaces' contents.
 *
 * It imports only what `openmcp-engine/backend` exports (here by path, as it lives in the engine's repository) and
 * @kubernetes/client-node.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Namespace,
  type V1RoleBinding,
  VersionApi,
} from "@kubernetes/client-node";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendContractVersion,
  BackendFactory,
  ClusterBackend,
  ConfigOffer,
} from "../../src/api/backend-contract.ts";
import type { JsonObject } from "../../src/api/common.ts";
import { apiStatusOf, errorMessage } from "../../src/api/error-message.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";

/**
 * Built for contract 1.6: it returns `AdminAccess.scope` and `ClusterObservation.incomplete` (1.2), and names its
 * admin's namespace in `ClusterObservation.adminNamespaces` (1.6).
 */
export const contractVersion: BackendContractVersion = "1.6.0";

/** The label that ties a namespace to its Cluster object. */
const UID_LABEL = "namespace-clusters.openmcp.cloud/cluster-uid";
/** The version the namespace was made at (always the host's). */
const VERSION_ANNOTATION = "namespace-clusters.openmcp.cloud/version";
/** The tenant's admin: a ServiceAccount, and the RoleBinding that makes it `admin` of its namespace. */
const ADMIN = "cluster-admin";
/** How long an admin token lives; the engine asks again for every grant, so short is fine. */
const ADMIN_TOKEN_SECONDS = 3600;

/** The namespace of a Cluster object: named by its uid, so a re-created object gets a new one. */
export function namespaceOf(uid: string): string {
  return `nc-${createHash("sha256").update(uid).digest("hex").slice(0, 16)}`;
}

/** The API status code of a failed call, if it was one. */
const codeOf = (error: unknown) => apiStatusOf(error)?.code;

/** Ignores the failure `code` (e.g. 404 on a delete, 409 on a create); anything else is thrown on. */
async function unless<T>(code: number, call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (codeOf(error) === code) return undefined;
    throw error;
  }
}

/** The host cluster as the backend uses it. */
interface Host {
  readonly server: string;
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Api;
  readonly rbac: RbacAuthorizationV1Api;
}

export class NamespaceBackend implements ClusterBackend {
  readonly name = "namespace-clusters";
  readonly capabilities = { adminAccess: true, oidc: false } as const;
  readonly #context: BackendContext;
  /** Hosts by kubeconfig text (a rotated Secret is a new host entry). */
  readonly #hosts = new Map<string, Host>();

  constructor(context: BackendContext) {
    this.#context = context;
  }

  supportedVersions(config: ProviderConfig) {
    return config.spec.supportedVersions ?? [];
  }

  traits(config: ProviderConfig) {
    return config.spec.traits ?? ["shared"];
  }

  /** A namespace runs what its host runs: the host's version is the one offer. */
  async readOffer(config: ProviderConfig): Promise<ConfigOffer> {
    return {
      versions: [{ version: await this.#hostVersion(config.spec.settings) }],
      traits: this.traits(config),
    };
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const host = await this.#host(target.settings);
    const namespace = await this.#namespace(host, target);
    if (!namespace) return { exists: false };
    const version = namespace.metadata?.annotations?.[VERSION_ANNOTATION] ?? "";
    const name = namespaceOf(target.uid);
    if (namespace.metadata?.deletionTimestamp) return { exists: true, phase: "deleting", version };
    const missing = await this.#missingParts(host, name);
    if (missing.length > 0)
      return {
        exists: true,
        phase: "provisioning",
        version,
        incomplete: `${missing.join(" and ")} missing in namespace ${name} on the host`,
      };
    // Its admin is of this namespace only: the Cluster's status names it (contract 1.6).
    return {
      exists: true,
      phase: "ready",
      version,
      endpoint: host.server,
      info: `namespace ${name}`,
      adminNamespaces: [name],
    };
  }

  /** Makes what is missing (namespace, ServiceAccount, RoleBinding) and keeps what is there: idempotent, and the repair. */
  async create(target: ClusterTarget, version: string): Promise<void> {
    const host = await this.#host(target.settings);
    const name = namespaceOf(target.uid);
    const made = await unless(
      409,
      host.core.createNamespace({
        body: {
          metadata: {
            name,
            labels: { [UID_LABEL]: target.uid },
            annotations: { [VERSION_ANNOTATION]: version },
          },
        },
      }),
    );
    if (!made) {
      const existing = await this.#namespace(host, target);
      if (!existing)
        throw new Error(`namespace ${name} on the host belongs to something else; remove it or its label`);
      if (existing.metadata?.deletionTimestamp)
        throw new Error(
          `namespace ${name} on the host is still being deleted; it is made again once it is gone`,
        );
    }
    await unless(
      409,
      host.core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: ADMIN } } }),
    );
    const binding = await unless(404, host.rbac.readNamespacedRoleBinding({ namespace: name, name: ADMIN }));
    if (binding && bindsAdmin(binding, name)) return;
    // A RoleBinding's roleRef cannot change: one that binds something else is replaced.
    if (binding) await unless(404, host.rbac.deleteNamespacedRoleBinding({ namespace: name, name: ADMIN }));
    await unless(409, host.rbac.createNamespacedRoleBinding({ namespace: name, body: adminBinding(name) }));
  }

  /** The host runs one version; asking for another is refused with what it runs. */
  async update(target: ClusterTarget, version: string): Promise<void> {
    const running = await this.#hostVersion(target.settings);
    if (version !== running)
      throw new Error(
        `namespace clusters run their host's Kubernetes ${running}; ${version} cannot be had here`,
      );
  }

  async delete(target: ClusterTarget): Promise<void> {
    const host = await this.#host(target.settings);
    if (!(await this.#namespace(host, target))) return;
    await unless(404, host.core.deleteNamespace({ name: namespaceOf(target.uid) }));
  }

  /** A token of the namespace's admin ServiceAccount, admin of that namespace only (the scope says so). */
  async adminAccess(target: ClusterTarget): Promise<AdminAccess | undefined> {
    const observation = await this.observe(target);
    if (!observation.exists || observation.phase !== "ready") return undefined;
    const host = await this.#host(target.settings);
    const namespace = namespaceOf(target.uid);
    const request = await host.core.createNamespacedServiceAccountToken({
      namespace,
      name: ADMIN,
      body: { spec: { audiences: [], expirationSeconds: ADMIN_TOKEN_SECONDS } },
    });
    const token = request.status?.token;
    if (!token) throw new Error(`the host issued no token for ServiceAccount ${namespace}/${ADMIN}`);
    return {
      kubeconfig: await tokenKubeconfig(host, token),
      scope: { namespaces: [namespace], accessNamespace: namespace },
    };
  }

  /** Namespace clusters the host holds for this backend (not being deleted): for the kit's count. */
  async liveClusters(settings?: JsonObject): Promise<number> {
    const host = await this.#host(settings);
    const list = await host.core.listNamespace({ labelSelector: UID_LABEL });
    return list.items.filter((ns) => !ns.metadata?.deletionTimestamp).length;
  }

  /** The namespace of `target` if it is there and carries its uid. */
  async #namespace(host: Host, target: ClusterTarget): Promise<V1Namespace | undefined> {
    const namespace = await unless(404, host.core.readNamespace({ name: namespaceOf(target.uid) }));
    return namespace?.metadata?.labels?.[UID_LABEL] === target.uid ? namespace : undefined;
  }

  /** What of the tenant's admin is missing: the ServiceAccount, the RoleBinding (or one binding something else). */
  async #missingParts(host: Host, namespace: string): Promise<string[]> {
    const missing: string[] = [];
    if (!(await unless(404, host.core.readNamespacedServiceAccount({ namespace, name: ADMIN }))))
      missing.push(`ServiceAccount ${ADMIN}`);
    const binding = await unless(404, host.rbac.readNamespacedRoleBinding({ namespace, name: ADMIN }));
    if (!binding || !bindsAdmin(binding, namespace)) missing.push(`RoleBinding ${ADMIN}`);
    return missing;
  }

  async #hostVersion(settings: JsonObject | undefined): Promise<string> {
    const host = await this.#host(settings);
    const { gitVersion } = await host.kubeConfig.makeApiClient(VersionApi).getCode();
    const version = /^v?(\d+\.\d+\.\d+)/.exec(gitVersion)?.[1];
    if (!version) throw new Error(`the host reports Kubernetes "${gitVersion}", which is no version`);
    return version;
  }

  /** The host, from the ProviderConfig's Secret or else the backend option; throws saying what to give. */
  async #host(settings: JsonObject | undefined): Promise<Host> {
    const text = await this.#hostKubeconfig(settings);
    let host = this.#hosts.get(text);
    if (!host) {
      const kubeConfig = new KubeConfig();
      try {
        kubeConfig.loadFromString(text);
      } catch (error) {
        throw new Error(`namespace-clusters: the host kubeconfig does not load: ${errorMessage(error)}`);
      }
      const server = kubeConfig.getCurrentCluster()?.server;
      if (!server) throw new Error("namespace-clusters: the host kubeconfig names no server");
      host = {
        server,
        kubeConfig,
        core: kubeConfig.makeApiClient(CoreV1Api),
        rbac: kubeConfig.makeApiClient(RbacAuthorizationV1Api),
      };
      this.#hosts.set(text, host);
    }
    return host;
  }

  async #hostKubeconfig(settings: JsonObject | undefined): Promise<string> {
    const ref = settings?.kubeconfigSecretRef as
      | { namespace?: unknown; name?: unknown; key?: unknown }
      | undefined;
    if (ref !== undefined) {
      const { namespace, name, key = "kubeconfig" } = ref;
      if (typeof namespace !== "string" || typeof name !== "string" || typeof key !== "string")
        throw new Error(
          "namespace-clusters: settings.kubeconfigSecretRef needs namespace and name (and optionally key)",
        );
      const text = await this.#context.readSecret(namespace, name, key);
      if (!text) throw new Error(`namespace-clusters: Secret ${namespace}/${name} has no key ${key}`);
      return text;
    }
    const file = this.#context.options.kubeconfig;
    if (file) return readFile(file, "utf8");
    throw new Error(
      "namespace-clusters: no host cluster: give --backend-option kubeconfig=<file>, or settings.kubeconfigSecretRef {namespace, name} in the ProviderConfig",
    );
  }
}

/** The tenant admin's RoleBinding in `namespace`: its ServiceAccount is `admin` there (which may mint tokens there). */
function adminBinding(namespace: string): V1RoleBinding {
  return {
    metadata: { name: ADMIN },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    subjects: [{ kind: "ServiceAccount", name: ADMIN, namespace }],
  };
}

/** Whether `binding` makes the namespace's admin ServiceAccount `admin` there. */
function bindsAdmin(binding: V1RoleBinding, namespace: string): boolean {
  return (
    binding.roleRef.kind === "ClusterRole" &&
    binding.roleRef.name === "admin" &&
    (binding.subjects ?? []).some(
      (s) => s.kind === "ServiceAccount" && s.name === ADMIN && s.namespace === namespace,
    )
  );
}

/** A kubeconfig for the host's server with `token`, trusting what the host kubeconfig trusts. */
async function tokenKubeconfig(host: Host, token: string): Promise<string> {
  const cluster = host.kubeConfig.getCurrentCluster();
  const caData =
    cluster?.caData ??
    (cluster?.caFile ? Buffer.from(await readFile(cluster.caFile)).toString("base64") : undefined);
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: "tenant",
        server: host.server,
        ...(caData ? { caData } : {}),
        ...(cluster?.skipTLSVerify ? { skipTLSVerify: true } : {}),
      },
    ],
    users: [{ name: "tenant-admin", token }],
    contexts: [{ name: "tenant", cluster: "tenant", user: "tenant-admin" }],
    currentContext: "tenant",
  });
  return config.exportConfig(); // JSON, which is YAML too
}

/** What the engine calls to make the backend (`--backend ./examples/namespace-clusters/namespace-backend.ts`). */
export const createBackend: BackendFactory = (context) => new NamespaceBackend(context);
