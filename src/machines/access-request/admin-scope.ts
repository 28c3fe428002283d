/**
 * What a namespaced admin access (contract 1.2, `AdminAccess.scope`) may grant: rights inside its namespaces
 * only. Pure: a request that asks for more is denied with the reason, before anything is tried on the target.
 */
import type { AccessRequest, PermissionRequest, RoleRef } from "../../api/access-request.ts";
import type { AdminScope } from "../../api/backend-contract.ts";

/** Where each part of the request would need rights outside `scope`, in words; empty when it fits. */
function outsideScope(request: AccessRequest, scope: AdminScope): string[] {
  const inside = new Set(scope.namespaces);
  const permission = (field: string) => (entry: PermissionRequest, i: number) =>
    !entry.namespace
      ? `${field}[${i}] asks for cluster-wide rules (a ClusterRole)`
      : !inside.has(entry.namespace)
        ? `${field}[${i}] asks for namespace ${entry.namespace}`
        : undefined;
  const reference = (field: string) => (ref: RoleRef, j: number) =>
    !ref.namespace
      ? ref.kind === "ClusterRole"
        ? `${field}[${j}] binds ClusterRole ${ref.name} cluster-wide (a ClusterRoleBinding)`
        : undefined // a Role without namespace is invalid, and denied as such first
      : !inside.has(ref.namespace)
        ? `${field}[${j}] binds ${ref.kind} ${ref.name} in namespace ${ref.namespace}`
        : undefined;
  const { token, oidc } = request.spec;
  return [
    ...(token?.permissions ?? []).map(permission("token.permissions")),
    ...(token?.roleRefs ?? []).map(reference("token.roleRefs")),
    ...(oidc?.roles ?? []).map(permission("oidc.roles")),
    ...(oidc?.roleBindings ?? []).flatMap((binding, k) =>
      binding.roleRefs.map(reference(`oidc.roleBindings[${k}].roleRefs`)),
    ),
  ].filter((problem): problem is string => problem !== undefined);
}

/**
 * Why a backend whose admin access is namespaced cannot grant the request: every permission, role and binding
 * it asks for that lies outside the scope's namespaces, or is cluster-wide; undefined when it fits (or there
 * is no scope: cluster-admin may grant anything).
 */
export function scopeDenial(request: AccessRequest, scope: AdminScope | undefined): string | undefined {
  if (!scope) return undefined;
  const outside = outsideScope(request, scope);
  if (outside.length === 0) return undefined;
  return `the backend's admin access to this Cluster is limited to namespace(s) ${scope.namespaces.join(", ")}, so it cannot grant what ${outside.join("; ")}; ask for Roles (or ClusterRoles bound with a namespace) in ${scope.namespaces.length === 1 ? "that namespace" : "those namespaces"} only`;
}
