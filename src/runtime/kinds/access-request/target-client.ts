/** Talks to an AccessRequest's target cluster with the backend's admin access: RBAC objects and tokens. */
import {
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";
import type { AccessRequest, RoleRef } from "../../../api/access-request.ts";
import type { AdminAccess, AdminScope } from "../../../api/backend-contract.ts";
import { ACCESS_REQUEST_REASONS, ACCESS_SECRET_KEYS } from "../../../api/constants/access-request.ts";
import { LABELS, MANAGED_BY_ENGINE } from "../../../api/constants.ts";
import {
  apiStatusOf,
  errorMessage,
  formatApiStatus,
  isConflict,
  isNotFound,
} from "../../../api/error-message.ts";
import type { OwnedObject, TargetProblem } from "../../../machines/access-request/facts.ts";
import {
  grantNamespace,
  oidcKubeconfig,
  tokenKubeconfig,
} from "../../../machines/access-request/kubeconfig.ts";
import {
  ACCESS_NAMESPACE,
  ACCESS_OWNER_LABEL,
  accessBaseName,
  accessRequestIdentity,
  NAMESPACE_CREATOR_LABEL,
  permissionName,
  serviceAccountName,
} from "../../../machines/access-request/names.ts";
import type { KubeObject } from "../../../machines/access-request/rbac-objects.ts";
import type { DesiredAccess } from "../../../machines/access-request/rbac-plan.ts";
import type { ExistingObject } from "../../../machines/access-request/rbac-validation.ts";
import { reuseConnections } from "../../api-server/connection-reuse.ts";
import { serverSideApply } from "../../api-server/server-side-apply.ts";

/** Credentials to put in the request's Secret (string values; the Secret writer encodes them). */
export type AccessSecretData = Readonly<Record<string, string>>;

/** What the AccessRequest controller does on a target cluster. */
export interface AccessTargetClient {
  /** The target's API server URL, as the admin kubeconfig names it. */
  readonly server: string;
  ownedObjects(uid: string): Promise<OwnedObject[]>;
  /** The Roles and ClusterRoles on the target that carry the names the request gives its permissions. */
  namedRoles(request: AccessRequest): Promise<ExistingObject[]>;
  /** The roles the request binds by reference that do not exist on the target, each in words with the field that binds it. */
  missingRoles(request: AccessRequest): Promise<string[]>;
  apply(uid: string, desired: DesiredAccess): Promise<void>;
  revoke(uid: string): Promise<void>;
  issueToken(request: AccessRequest, validityMs: number, nowMs: number): Promise<AccessSecretData>;
  oidcLogin(request: AccessRequest): AccessSecretData;
}

/**
 * What a failed call on the target cluster `cluster` amounts to, for the AccessRequest's condition: refused
 * (401, 403) or another answer of its API server, in the words of its Status (which name the verb and the
 * resource); or not reached at all (connection, TLS, timeout), with the cause. Never raw HTTP, never a header.
 */
export function targetProblemOf(error: unknown, cluster: string, server: string): TargetProblem {
  const status = apiStatusOf(error);
  if (status?.code === 401 || status?.code === 403) {
    return {
      reason: ACCESS_REQUEST_REASONS.TargetRefused,
      message: `the API server of Cluster ${cluster} refused the backend's admin access: ${formatApiStatus(status)}`,
    };
  }
  if (status) {
    return {
      reason: ACCESS_REQUEST_REASONS.TargetError,
      message: `the API server of Cluster ${cluster} answered ${formatApiStatus(status)}`,
    };
  }
  return {
    reason: ACCESS_REQUEST_REASONS.TargetUnreachable,
    message: `the API server of Cluster ${cluster} at ${server} cannot be reached: ${errorMessage(error)}`,
  };
}

const key = (kind: string, namespace: string | undefined, name: string) =>
  `${kind}/${namespace ?? ""}/${name}`;

/** Listed objects of one kind, as the list calls return them. */
type Listed = ReadonlyArray<{ metadata?: { name?: string; namespace?: string } }>;

/** The client made for each admin access (see {@link targetClient}); it goes with the access. */
const clients = new WeakMap<AdminAccess, AccessTargetClient>();

/**
 * A client for the cluster the admin kubeconfig points at. With `scope` (a namespaced admin, contract 1.2) it
 * reads and writes inside the scope's namespaces only: it lists per namespace, never across all of them, reads
 * no cluster-wide object, creates no namespace, and keeps ServiceAccounts in `scope.accessNamespace`. Without
 * it (cluster-admin) it creates a namespace a permission names only when it is missing, labelled with the
 * request it was made for, and removes on revoke only the namespaces it made (handing one to another request
 * whose objects are still in it).
 *
 * One client per admin access the engine holds (the engine-wide cache's object, kept for a rotation window), and
 * its requests share one TLS connection pool: client-node opens a new connection for every request, and the
 * AccessRequests of one test file made 2,073 of them to their clusters, a TLS handshake and context each, a fifth of
 * the CPU of the process that ran them. A new access (rotated, or read again after a 401) gets a new client; the old
 * one goes with the access it was made for.
 */
export function targetClient(admin: AdminAccess): AccessTargetClient {
  let client = clients.get(admin);
  if (!client) {
    client = new TargetClient(admin.kubeconfig, admin.scope);
    clients.set(admin, client);
  }
  return client;
}

class TargetClient implements AccessTargetClient {
  readonly server: string;
  readonly #scope: AdminScope | undefined;
  readonly #caData: string;
  readonly #core: CoreV1Api;
  readonly #rbac: RbacAuthorizationV1Api;
  readonly #objects: KubernetesObjectApi;

  constructor(adminKubeconfig: string, scope: AdminScope | undefined) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(adminKubeconfig);
    reuseConnections(kubeConfig);
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.#objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    const cluster = kubeConfig.getCurrentCluster();
    this.server = cluster?.server ?? "";
    this.#caData = cluster?.caData ?? "";
    this.#scope = scope;
  }

  async ownedObjects(uid: string): Promise<OwnedObject[]> {
    return (await this.#labelled(`${ACCESS_OWNER_LABEL}=${uid}`)).flatMap(([kind, items]) =>
      items.map((item) => ({
        kind,
        ...(item.metadata?.namespace ? { namespace: item.metadata.namespace } : {}),
        name: item.metadata?.name ?? "",
        body: item as unknown as Record<string, unknown>,
      })),
    );
  }

  async namedRoles(request: AccessRequest): Promise<ExistingObject[]> {
    const permissions = request.spec.token?.permissions ?? request.spec.oidc?.roles ?? [];
    const existing: ExistingObject[] = [];
    for (const [index, permission] of permissions.entries()) {
      if (!permission.name) continue; // generated names carry a hash of the request: no one else has them
      if (!this.#inScope(permission.namespace)) continue; // denied before it matters: not readable with a namespaced admin
      const name = permissionName(accessRequestIdentity(request), index, permission);
      const found = await this.#readRole(name, permission.namespace);
      if (!found) continue;
      existing.push({
        kind: permission.namespace ? "Role" : "ClusterRole",
        ...(permission.namespace ? { namespace: permission.namespace } : {}),
        name,
        labels: found.metadata?.labels ?? {},
      });
    }
    return existing;
  }

  async missingRoles(request: AccessRequest): Promise<string[]> {
    const missing = new Map<string, string[]>();
    for (const { ref, source } of referencedRoles(request)) {
      if (ref.kind === "Role" && !ref.namespace) continue; // invalid, denied before it matters
      // A namespaced admin cannot read ClusterRoles, nor Roles outside its namespaces (denied if bound there).
      if (this.#scope && (ref.kind === "ClusterRole" || !this.#inScope(ref.namespace))) continue;
      const what = ref.kind === "Role" ? `Role ${ref.namespace}/${ref.name}` : `ClusterRole ${ref.name}`;
      if (missing.has(what)) {
        missing.get(what)?.push(source);
        continue;
      }
      const found = await this.#readRole(ref.name, ref.kind === "Role" ? ref.namespace : undefined);
      if (!found) missing.set(what, [source]);
    }
    return [...missing].map(([what, sources]) => `${what} (bound by ${sources.join(", ")}) does not exist`);
  }

  async apply(uid: string, desired: DesiredAccess): Promise<void> {
    const before = await this.ownedObjects(uid);
    const found = new Map(before.map((o) => [key(o.kind, o.namespace, o.name), o]));
    // A namespaced admin creates no namespace: those of its scope exist, and others it may not touch.
    if (!this.#scope) for (const namespace of desired.namespaces) await this.#ensureNamespace(namespace, uid);
    for (const object of desired.objects) {
      // A binding's roleRef cannot change (the API server answers 422): one that binds another role is replaced.
      const had = found.get(keyOf(object));
      if (had && "roleRef" in object && !sameRoleRef(had.body.roleRef, object.roleRef)) {
        await deleteOwned(this.#objects, had);
      }
      await serverSideApply(this.#objects, object as KubernetesObject);
    }
    // Objects of an earlier spec that the current one no longer asks for.
    const wanted = new Set(desired.objects.map((o) => keyOf(o)));
    for (const stale of before.filter((o) => !wanted.has(key(o.kind, o.namespace, o.name)))) {
      await deleteOwned(this.#objects, stale);
    }
  }

  async revoke(uid: string): Promise<void> {
    const order = ["RoleBinding", "ClusterRoleBinding", "Role", "ClusterRole", "ServiceAccount"];
    const owned = (await this.ownedObjects(uid)).sort(
      (a, b) => order.indexOf(a.kind) - order.indexOf(b.kind),
    );
    for (const object of owned) await deleteOwned(this.#objects, object);
    if (!this.#scope) await this.#releaseNamespaces(uid);
  }

  async issueToken(request: AccessRequest, validityMs: number, nowMs: number): Promise<AccessSecretData> {
    const expirationSeconds = Math.max(600, Math.round(validityMs / 1_000));
    const review = await this.#core.createNamespacedServiceAccountToken({
      name: serviceAccountName(accessRequestIdentity(request)),
      namespace: this.#scope?.accessNamespace ?? ACCESS_NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds } },
    });
    const token = review.status?.token ?? "";
    const expires = review.status?.expirationTimestamp
      ? Math.floor(new Date(review.status.expirationTimestamp).getTime() / 1_000)
      : Math.floor(nowMs / 1_000) + expirationSeconds;
    const base = accessBaseName(accessRequestIdentity(request));
    return {
      [ACCESS_SECRET_KEYS.kubeconfig]: tokenKubeconfig({
        server: this.server,
        certificateAuthorityData: this.#caData,
        token,
        clusterName: request.spec.clusterRef?.name ?? "cluster",
        userName: base,
        ...this.#namespaceOf(request),
      }),
      [ACCESS_SECRET_KEYS.creationTimestamp]: String(Math.floor(nowMs / 1_000)),
      [ACCESS_SECRET_KEYS.expirationTimestamp]: String(expires),
    };
  }

  oidcLogin(request: AccessRequest): AccessSecretData {
    const oidc = request.spec.oidc;
    if (!oidc) throw new Error("not an OIDC request");
    return {
      [ACCESS_SECRET_KEYS.kubeconfig]: oidcKubeconfig({
        server: this.server,
        certificateAuthorityData: this.#caData,
        clusterName: request.spec.clusterRef?.name ?? "cluster",
        oidc,
        ...this.#namespaceOf(request),
      }),
    };
  }

  #inScope(namespace: string | undefined): boolean {
    return (
      this.#scope === undefined || (namespace !== undefined && this.#scope.namespaces.includes(namespace))
    );
  }

  /** The kubeconfig's default namespace, for a grant limited to one. */
  #namespaceOf(request: AccessRequest): { namespace?: string } {
    const namespace = grantNamespace(request, this.#scope);
    return namespace ? { namespace } : {};
  }

  /** The Role `namespace`/`name`, or the ClusterRole `name` without a namespace; undefined when it does not exist. */
  async #readRole(name: string, namespace: string | undefined): Promise<KubernetesObject | undefined> {
    try {
      return namespace
        ? await this.#rbac.readNamespacedRole({ name, namespace })
        : await this.#rbac.readClusterRole({ name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return undefined;
    }
  }

  /** Objects of the access kinds labelled `labelSelector`: across the cluster, or per namespace of the scope. */
  async #labelled(labelSelector: string): Promise<Array<readonly [string, Listed]>> {
    if (!this.#scope) return this.#labelledAcrossCluster(labelSelector);
    const perNamespace = await Promise.all(
      this.#scope.namespaces.map((namespace) => this.#labelledIn(namespace, labelSelector)),
    );
    return perNamespace.flat();
  }

  async #labelledAcrossCluster(labelSelector: string): Promise<Array<readonly [string, Listed]>> {
    const [accounts, roles, roleBindings, clusterRoles, clusterRoleBindings] = await Promise.all([
      this.#core.listServiceAccountForAllNamespaces({ labelSelector }),
      this.#rbac.listRoleForAllNamespaces({ labelSelector }),
      this.#rbac.listRoleBindingForAllNamespaces({ labelSelector }),
      this.#rbac.listClusterRole({ labelSelector }),
      this.#rbac.listClusterRoleBinding({ labelSelector }),
    ]);
    return [
      ["ServiceAccount", accounts.items],
      ["Role", roles.items],
      ["RoleBinding", roleBindings.items],
      ["ClusterRole", clusterRoles.items],
      ["ClusterRoleBinding", clusterRoleBindings.items],
    ];
  }

  /** The namespaced access kinds in `namespace` labelled `labelSelector`. */
  async #labelledIn(namespace: string, labelSelector: string) {
    const [accounts, roles, roleBindings] = await Promise.all([
      this.#core.listNamespacedServiceAccount({ namespace, labelSelector }),
      this.#rbac.listNamespacedRole({ namespace, labelSelector }),
      this.#rbac.listNamespacedRoleBinding({ namespace, labelSelector }),
    ]);
    return [
      ["ServiceAccount", accounts.items],
      ["Role", roles.items],
      ["RoleBinding", roleBindings.items],
    ] as const;
  }

  /** Creates `name` only when it is missing, labelled as made for request `uid`; one that exists stays as it is. */
  async #ensureNamespace(name: string, uid: string): Promise<void> {
    try {
      await this.#core.readNamespace({ name });
      return;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const labels = { [NAMESPACE_CREATOR_LABEL]: uid, [LABELS.managedBy]: MANAGED_BY_ENGINE };
    await this.#core.createNamespace({ body: { metadata: { name, labels } } }).catch((error: unknown) => {
      if (!isConflict(error)) throw error; // made meanwhile by someone else: theirs
    });
  }

  /**
   * Removes the namespaces made for request `uid`; one that still holds another request's access objects is
   * handed to that request instead (relabelled), so it goes with the last request that uses it.
   */
  async #releaseNamespaces(uid: string): Promise<void> {
    const made = await this.#core.listNamespace({ labelSelector: `${NAMESPACE_CREATOR_LABEL}=${uid}` });
    for (const namespace of made.items) {
      const name = namespace.metadata?.name ?? "";
      const heir = await this.#heirOf(name, uid);
      if (heir === undefined) {
        await this.#core.deleteNamespace({ name }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      } else {
        const labels = { ...namespace.metadata?.labels, [NAMESPACE_CREATOR_LABEL]: heir };
        await this.#core.replaceNamespace({
          name,
          body: { ...namespace, metadata: { ...namespace.metadata, labels } },
        });
      }
    }
  }

  /** Another request than `uid` whose access objects are in namespace `name`, if any. */
  async #heirOf(name: string, uid: string): Promise<string | undefined> {
    return (await this.#labelledIn(name, ACCESS_OWNER_LABEL))
      .flatMap(([, items]) => items)
      .map((item) => item.metadata?.labels?.[ACCESS_OWNER_LABEL])
      .find((owner) => owner !== undefined && owner !== uid);
  }
}

/** The key of a desired object, as `key` makes it for an owned one. */
const keyOf = (object: KubeObject) => key(object.kind, object.metadata.namespace, object.metadata.name);

/** Every role reference of the request, with the field it comes from. */
function referencedRoles(request: AccessRequest): { ref: RoleRef; source: string }[] {
  const { token, oidc } = request.spec;
  return [
    ...(token?.roleRefs ?? []).map((ref, j) => ({ ref, source: `token.roleRefs[${j}]` })),
    ...(oidc?.roleBindings ?? []).flatMap((binding, k) =>
      binding.roleRefs.map((ref, j) => ({ ref, source: `oidc.roleBindings[${k}].roleRefs[${j}]` })),
    ),
  ];
}

/** Whether two roleRefs name the same role (kind and name; the API group is always RBAC's). */
function sameRoleRef(had: unknown, wanted: unknown): boolean {
  const ref = (value: unknown) => (value ?? {}) as { kind?: string; name?: string };
  return ref(had).kind === ref(wanted).kind && ref(had).name === ref(wanted).name;
}

async function deleteOwned(objects: KubernetesObjectApi, object: OwnedObject): Promise<void> {
  const apiVersion = object.kind === "ServiceAccount" ? "v1" : "rbac.authorization.k8s.io/v1";
  try {
    await objects.delete({
      apiVersion,
      kind: object.kind,
      metadata: { name: object.name, ...(object.namespace ? { namespace: object.namespace } : {}) },
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
