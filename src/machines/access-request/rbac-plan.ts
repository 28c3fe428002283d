/** What an AccessRequest needs on its target cluster: the namespaces, ServiceAccount, Roles and bindings to apply. Pure. */
import type {
  AccessRequest,
  PermissionRequest,
  PolicyRule,
  RoleKind,
  RoleRef,
  Subject,
} from "../../api/access-request.ts";
import {
  ACCESS_NAMESPACE,
  type AccessRequestIdentity,
  accessLabels,
  accessRequestIdentity,
  oidcBindingName,
  permissionName,
  roleRefBindingName,
  serviceAccountName,
} from "./names.ts";
import { oidcSubject } from "./oidc-prefixes.ts";
import {
  type BindingObject,
  type KubeObject,
  RBAC_API_VERSION,
  RBAC_GROUP,
  type RoleObject,
} from "./rbac-objects.ts";

/** Everything an AccessRequest needs on its target cluster. */
export interface DesiredAccess {
  /** Namespaces to create when missing, in order of first use, without repeats. Never deleted by us. */
  readonly namespaces: readonly string[];
  /** The objects, in a safe apply order: ServiceAccount, then Roles and ClusterRoles, then bindings. */
  readonly objects: readonly KubeObject[];
}

/** An object we want, and where in the spec it comes from (for messages). */
export interface PlannedObject {
  readonly object: KubeObject;
  /** Field path of the spec entry that asks for it, e.g. `token.permissions[0]`. */
  readonly source: string;
  /** True when its name is the user's (`permissions[].name`), so the user can choose another. */
  readonly userNamed: boolean;
}

/** A planned Role or ClusterRole. */
interface PlannedRole extends PlannedObject {
  readonly object: RoleObject;
}

/** The objects and namespaces of {@link desiredTokenAccess} or {@link desiredOidcAccess}, with their sources. */
export interface AccessPlan {
  /** As {@link DesiredAccess.namespaces}. */
  readonly namespaces: readonly string[];
  /** As {@link DesiredAccess.objects}, each with its source. */
  readonly planned: readonly PlannedObject[];
}

/**
 * What a token access needs on the target cluster.
 *
 * Flow: the ServiceAccount {@link serviceAccountName} in {@link ACCESS_NAMESPACE}; for each
 * `token.permissions[i]` a Role in its namespace (ClusterRole without one) named {@link permissionName}, with
 * exactly its rules; then for each permission a RoleBinding in the same namespace (ClusterRoleBinding) of the
 * same name binding that role to the ServiceAccount; then for each `token.roleRefs[j]` a binding named
 * {@link roleRefBindingName}: a Role → RoleBinding in the Role's namespace; a ClusterRole without namespace →
 * ClusterRoleBinding; a ClusterRole with a namespace → RoleBinding there (the ClusterRole's rules, in that
 * namespace only).
 *
 * Guarantees: every object carries {@link accessLabels}; `namespaces` starts with {@link ACCESS_NAMESPACE}
 * and then lists every permission namespace unless that permission sets `disableAutomaticNamespaceCreation`.
 * Roles named in `roleRefs` are not ours and are not in `objects`.
 *
 * Assumptions: `invalidRules` (rbac-validation.ts) found nothing; a Role reference without a namespace
 * (which it reports) yields no binding.
 */
export function desiredTokenAccess(request: AccessRequest): DesiredAccess {
  return toDesired(planToken(request));
}

/**
 * What an OIDC access needs on the target cluster (the trust in the issuer itself is the backend's business).
 *
 * Flow: for each `oidc.roles[i]` a Role or ClusterRole as for token permissions (not bound); then for each
 * `oidc.roleBindings[k]` and each of its `roleRefs[j]` one binding named {@link oidcBindingName} (`…:oidc<k>-<j>`)
 * of the kind chosen as for token `roleRefs`, whose subjects are the entry's subjects after {@link oidcSubject}.
 *
 * Guarantees: every object carries {@link accessLabels}; no ServiceAccount; `namespaces` lists the namespaces of
 * `oidc.roles` unless they set `disableAutomaticNamespaceCreation`.
 *
 * Assumptions: as for {@link desiredTokenAccess}.
 */
export function desiredOidcAccess(request: AccessRequest): DesiredAccess {
  return toDesired(planOidc(request));
}

/**
 * The plan of the access the request asks for: token access when it has `spec.token`, else OIDC access. The
 * ServiceAccount of token access lives in `accessNamespace` (a namespaced admin's, see `AdminScope`).
 */
export function accessPlan(request: AccessRequest, accessNamespace: string = ACCESS_NAMESPACE): AccessPlan {
  return request.spec.token ? planToken(request, accessNamespace) : planOidc(request);
}

// ——— Planning ———

function planToken(request: AccessRequest, accessNamespace: string = ACCESS_NAMESPACE): AccessPlan {
  const identity = accessRequestIdentity(request);
  const labels = accessLabels(identity);
  const permissions = request.spec.token?.permissions ?? [];
  const roleRefs = request.spec.token?.roleRefs ?? [];
  const account: Subject = {
    kind: "ServiceAccount",
    name: serviceAccountName(identity),
    namespace: accessNamespace,
  };
  const serviceAccount: PlannedObject = {
    object: {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: account.name, namespace: accessNamespace, labels },
    },
    source: "token",
    userNamed: false,
  };
  const roles = planRoles(identity, permissions, "token.permissions");
  const permissionBindings = roles.map(({ object: role, source, userNamed }): PlannedObject => {
    const { name, namespace } = role.metadata;
    return { object: binding(name, namespace, role.kind, name, [account], labels), source, userNamed };
  });
  const refBindings = roleRefs.flatMap((ref, j): PlannedObject[] => {
    const object = bindingForRoleRef(ref, roleRefBindingName(identity, j), [account], labels);
    return object ? [{ object, source: `token.roleRefs[${j}]`, userNamed: false }] : [];
  });
  return {
    namespaces: unique([accessNamespace, ...namespacesToCreate(permissions)]),
    planned: [serviceAccount, ...roles, ...permissionBindings, ...refBindings],
  };
}

function planOidc(request: AccessRequest): AccessPlan {
  const identity = accessRequestIdentity(request);
  const labels = accessLabels(identity);
  const oidc = request.spec.oidc;
  if (!oidc) return { namespaces: [], planned: [] };
  const roles = oidc.roles ?? [];
  const bindings = oidc.roleBindings.flatMap((entry, k) => {
    const subjects = entry.subjects.map((subject) => oidcSubject(subject, oidc));
    return entry.roleRefs.flatMap((ref, j): PlannedObject[] => {
      const object = bindingForRoleRef(ref, oidcBindingName(identity, k, j), subjects, labels);
      return object ? [{ object, source: `oidc.roleBindings[${k}].roleRefs[${j}]`, userNamed: false }] : [];
    });
  });
  return {
    namespaces: unique(namespacesToCreate(roles)),
    planned: [...planRoles(identity, roles, "oidc.roles"), ...bindings],
  };
}

function planRoles(
  identity: AccessRequestIdentity,
  permissions: readonly PermissionRequest[],
  field: string,
): PlannedRole[] {
  const labels = accessLabels(identity);
  return permissions.map((permission, i) => {
    const name = permissionName(identity, i, permission);
    const metadata = permission.namespace
      ? { name, namespace: permission.namespace, labels }
      : { name, labels };
    const object: RoleObject = {
      apiVersion: RBAC_API_VERSION,
      kind: permission.namespace ? "Role" : "ClusterRole",
      metadata,
      rules: permission.rules.map(copyRule),
    };
    return { object, source: `${field}[${i}]`, userNamed: Boolean(permission.name) };
  });
}

/** The binding for a reference to an existing role; undefined for a Role without namespace (invalid). */
function bindingForRoleRef(
  ref: RoleRef,
  name: string,
  subjects: readonly Subject[],
  labels: Readonly<Record<string, string>>,
): BindingObject | undefined {
  if (ref.kind === "Role" && !ref.namespace) return undefined;
  return binding(name, ref.namespace || undefined, ref.kind, ref.name, subjects, labels);
}

/** A RoleBinding in `namespace`, or a ClusterRoleBinding when there is none. */
function binding(
  name: string,
  namespace: string | undefined,
  roleKind: RoleKind,
  roleName: string,
  subjects: readonly Subject[],
  labels: Readonly<Record<string, string>>,
): BindingObject {
  return {
    apiVersion: RBAC_API_VERSION,
    kind: namespace ? "RoleBinding" : "ClusterRoleBinding",
    metadata: namespace ? { name, namespace, labels } : { name, labels },
    roleRef: { apiGroup: RBAC_GROUP, kind: roleKind, name: roleName },
    subjects,
  };
}

/** A rule with exactly the given fields and values, sharing no arrays with the spec. */
function copyRule(rule: PolicyRule): PolicyRule {
  return {
    ...(rule.apiGroups ? { apiGroups: [...rule.apiGroups] } : {}),
    ...(rule.resources ? { resources: [...rule.resources] } : {}),
    ...(rule.resourceNames ? { resourceNames: [...rule.resourceNames] } : {}),
    ...(rule.nonResourceURLs ? { nonResourceURLs: [...rule.nonResourceURLs] } : {}),
    verbs: [...rule.verbs],
  };
}

function namespacesToCreate(permissions: readonly PermissionRequest[]): string[] {
  return permissions.flatMap((permission) =>
    permission.namespace && !permission.disableAutomaticNamespaceCreation ? [permission.namespace] : [],
  );
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The objects and namespaces of a plan, without their sources: what is applied. */
export function toDesired(plan: AccessPlan): DesiredAccess {
  return { namespaces: plan.namespaces, objects: plan.planned.map((entry) => entry.object) };
}
