/**
 * The conformance kit's proof that a backend's admin access works: the returned kubeconfig is used against
 * the cluster (a SelfSubjectReview shows whom it authenticates as, SelfSubjectAccessReviews what it may do),
 * and what it may do is held against what the backend declares (cluster-admin, or admin of `scope.namespaces`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AdminAccess, AdminScope } from "../api/backend-contract.ts";
import { apiStatusOf, errorMessage } from "../api/error-message.ts";

/** One thing an admin kubeconfig must be allowed to do, as a SelfSubjectAccessReview asks it. */
export interface RequiredPermission {
  readonly verb: string;
  /** API group; `""` is the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** Absent: cluster-wide (for a namespaced resource, in every namespace). */
  readonly namespace?: string;
}

/** What the engine does with cluster-admin access: cluster roles and bindings, namespaces, token accounts anywhere. */
const CLUSTER_ADMIN: readonly RequiredPermission[] = [
  { verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
  { verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings" },
  { verb: "create", group: "", resource: "namespaces" },
  { verb: "create", group: "", resource: "serviceaccounts" },
  { verb: "create", group: "", resource: "serviceaccounts", subresource: "token" },
];

/** What the engine does in each namespace of a scoped admin: roles, bindings, token accounts. */
const NAMESPACE_ADMIN: readonly Omit<RequiredPermission, "namespace">[] = [
  { verb: "create", group: "rbac.authorization.k8s.io", resource: "roles" },
  { verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings" },
  { verb: "create", group: "", resource: "serviceaccounts" },
  { verb: "create", group: "", resource: "serviceaccounts", subresource: "token" },
];

/** The permissions an admin kubeconfig with this scope (none: cluster-admin) must have. */
export function requiredPermissions(scope: AdminScope | undefined): readonly RequiredPermission[] {
  if (!scope) return CLUSTER_ADMIN;
  return scope.namespaces.flatMap((namespace) => NAMESPACE_ADMIN.map((p) => ({ ...p, namespace })));
}

/** `create serviceaccounts/token in namespace "t1"`, `create clusterroles.rbac.authorization.k8s.io cluster-wide`. */
export function describePermission(p: RequiredPermission): string {
  const resource = `${p.resource}${p.group ? `.${p.group}` : ""}${p.subresource ? `/${p.subresource}` : ""}`;
  const where =
    p.namespace !== undefined
      ? `in namespace "${p.namespace}"`
      : p.resource === "serviceaccounts"
        ? "in every namespace"
        : "cluster-wide";
  return `${p.verb} ${resource} ${where}`;
}

/** What is wrong with a declared scope itself (before any cluster is asked); undefined when nothing is. */
export function scopeProblem(scope: AdminScope | undefined): string | undefined {
  if (!scope) return undefined;
  if (scope.namespaces.length === 0)
    return "scope.namespaces is empty: admin of no namespace is no admin access";
  if (!scope.namespaces.includes(scope.accessNamespace))
    return `scope.accessNamespace "${scope.accessNamespace}" is not one of scope.namespaces (${scope.namespaces.join(", ")})`;
  return undefined;
}

/** The message of an error with its causes (`fetch failed: connect ECONNREFUSED 127.0.0.1:1234`), never headers. */
function withCauses(error: unknown): string {
  const parts = [errorMessage(error)];
  for (let cause = (error as Error)?.cause, depth = 0; cause && depth < 5; depth++) {
    const text = errorMessage(cause);
    if (!parts.includes(text)) parts.push(text);
    cause = (cause as Error).cause;
  }
  return parts.join(": ");
}

/** Rejects when `promise` has not settled within `timeoutMs`. */
async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long permissions denied at first are asked again (RBAC caches catching up with a new binding). */
const RBAC_SETTLE_MS = 10_000;

/**
 * Uses `access` against its cluster and returns what fails, for a person: the kubeconfig does not load, the
 * cluster cannot be reached, the kubeconfig does not authenticate, or it may not do what its scope declares
 * (every missing permission named, with the user it authenticated as; asked again for up to 10 s first). Undefined
 * when everything works. Never returns a credential.
 */
export async function adminAccessProblem(
  access: AdminAccess,
  timeoutMs: number,
): Promise<string | undefined> {
  const declared = scopeProblem(access.scope);
  if (declared) return declared;
  // Loaded only here: a kit run on stand-in clusters never pays for the Kubernetes client.
  const { AuthenticationV1Api, AuthorizationV1Api, KubeConfig } = await import("@kubernetes/client-node");
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(access.kubeconfig);
  } catch (error) {
    return `the admin kubeconfig does not load: ${errorMessage(error)}`;
  }
  const server = kubeConfig.getCurrentCluster()?.server ?? "(no server)";
  let user: string;
  try {
    const review = await within(
      kubeConfig.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
        body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      }),
      timeoutMs,
      `a SelfSubjectReview at ${server}`,
    );
    user = review.status?.userInfo?.username ?? "(unnamed)";
  } catch (error) {
    const refused =
      apiStatusOf(error)?.code === 401
        ? "401 Unauthorized: the API server refused its credentials"
        : withCauses(error);
    return `the admin kubeconfig does not authenticate at ${server} (SelfSubjectReview: ${refused})`;
  }
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  // Kubernetes authorizes from caches: a binding made moments ago may not count yet. What is denied is asked again
  // for a short while before it is called denied.
  const settleBy = Date.now() + Math.min(timeoutMs, RBAC_SETTLE_MS);
  let denied: string[] = [];
  for (;;) {
    denied = [];
    for (const permission of requiredPermissions(access.scope)) {
      const { namespace, subresource, ...attributes } = permission;
      try {
        const review = await within(
          authorization.createSelfSubjectAccessReview({
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SelfSubjectAccessReview",
              spec: {
                resourceAttributes: {
                  ...attributes,
                  ...(subresource ? { subresource } : {}),
                  ...(namespace !== undefined ? { namespace } : {}),
                },
              },
            },
          }),
          timeoutMs,
          `a SelfSubjectAccessReview at ${server}`,
        );
        if (!review.status?.allowed) denied.push(describePermission(permission));
      } catch (error) {
        return `the admin kubeconfig (user ${user}) cannot ask what it may do at ${server} (SelfSubjectAccessReview: ${withCauses(error)})`;
      }
    }
    if (denied.length === 0 || Date.now() > settleBy) break;
    await sleep(500);
  }
  if (denied.length === 0) return undefined;
  const declaredAs = access.scope
    ? `admin of namespaces ${access.scope.namespaces.join(", ")} (its scope)`
    : "cluster-admin (no scope)";
  return `the admin kubeconfig (user ${user}) at ${server} is declared ${declaredAs} but may not ${denied.join("; ")}`;
}
