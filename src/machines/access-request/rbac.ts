/** What an AccessRequest needs on its target cluster (ServiceAccount, roles, bindings), and when it cannot have it. Pure. */
import type {
  AccessRequest,
  OidcAccess,
  PermissionRequest,
  PolicyRule,
  RoleKind,
  RoleRef,
  Subject,
} from "../../api/access-request.ts";
import {
  ACCESS_NAMESPACE,
  ACCESS_OWNER_LABEL,
  type AccessRequestIdentity,
  accessLabels,
  accessRequestIdentity,
  oidcBindingName,
  permissionName,
  roleRefBindingName,
  serviceAccountName,
} from "./names.ts";

/** API group of RBAC objects, and of User and Group subjects. */
export const RBAC_GROUP = "rbac.authorization.k8s.io";
/** `apiVersion` of RBAC objects. */
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;

/** The metadata of an object we make: a name, a namespace for namespaced kinds, and our labels. */
export type KubeObjectMeta = {
  /** Name of the object. */
  readonly name: string;
  /** Namespace; absent for cluster-scoped kinds. */
  readonly namespace?: string;
  /** {@link ACCESS_OWNER_LABEL} and `app.kubernetes.io/managed-by`. */
  readonly labels: Readonly<Record<string, string>>;
};

/** The ServiceAccount of a token access. */
export type ServiceAccountObject = {
  readonly apiVersion: "v1";
  readonly kind: "ServiceAccount";
  readonly metadata: KubeObjectMeta;
};

/** A Role (namespaced) or ClusterRole made from a {@link PermissionRequest}. */
export type RoleObject = {
  readonly apiVersion: typeof RBAC_API_VERSION;
  readonly kind: RoleKind;
  readonly metadata: KubeObjectMeta;
  /** The permission's rules, as given. */
  readonly rules: readonly PolicyRule[];
};

/** What a binding grants: a Role or ClusterRole by name (a Role in the binding's namespace). */
export type BindingRoleRef = {
  readonly apiGroup: typeof RBAC_GROUP;
  readonly kind: RoleKind;
  readonly name: string;
};

/** A RoleBinding (namespaced) or ClusterRoleBinding. */
export type BindingObject = {
  readonly apiVersion: typeof RBAC_API_VERSION;
  readonly kind: "RoleBinding" | "ClusterRoleBinding";
  readonly metadata: KubeObjectMeta;
  /** The role granted; cannot change once the binding exists (delete and create it again). */
  readonly roleRef: BindingRoleRef;
  /** Who gets it. */
  readonly subjects: readonly Subject[];
};

/**
 * A plain JSON Kubernetes object we make on a target cluster; `kind` tells which. (Type aliases rather than
 * interfaces, so that these objects are assignable to `Record<string, unknown>` and client-node's types.)
 */
export type KubeObject = ServiceAccountObject | RoleObject | BindingObject;

/** Everything an AccessRequest needs on its target cluster. */
export interface DesiredAccess {
  /** Namespaces to create when missing, in order of first use, without repeats. Never deleted by us. */
  readonly namespaces: readonly string[];
  /** The objects, in a safe apply order: ServiceAccount, then Roles and ClusterRoles, then bindings. */
  readonly objects: readonly KubeObject[];
}

/** An object we want, and where in the spec it comes from (for messages). */
interface Planned {
  readonly object: KubeObject;
  /** Field path of the spec entry that asks for it, e.g. `token.permissions[0]`. */
  readonly source: string;
  /** True when its name is the user's (`permissions[].name`), so the user can choose another. */
  readonly userNamed: boolean;
}

/** A planned Role or ClusterRole. */
interface PlannedRole extends Planned {
  readonly object: RoleObject;
}

/** The objects and namespaces of {@link desiredTokenAccess} or {@link desiredOidcAccess}, with their sources. */
interface Plan {
  readonly namespaces: readonly string[];
  readonly planned: readonly Planned[];
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
 * Assumptions: {@link invalidRules} found nothing; a Role reference without a namespace (which it reports)
 * yields no binding.
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

/** The effective user and group prefixes of an OIDC access; see {@link effectivePrefix}. */
export interface OidcPrefixes {
  /** Put before every user name the issuer's tokens carry. */
  readonly username: string;
  /** Put before every group name the issuer's tokens carry. */
  readonly groups: string;
}

/**
 * The prefixes the target cluster's API server must put before names from this issuer, and that
 * {@link oidcSubject} puts before subject names, so that the two agree.
 */
export function oidcPrefixes(oidc: OidcAccess): OidcPrefixes {
  return {
    username: effectivePrefix(oidc.usernamePrefix, oidc.name),
    groups: effectivePrefix(oidc.groupsPrefix, oidc.name),
  };
}

/**
 * One configured prefix made effective: unset → `<name>:`; `""` → no prefix; anything else gets a trailing `:`
 * unless it has one (as openMCP's `OIDCProviderConfig.Default()` does).
 *
 * Guarantees: idempotent — configuring the result gives the result again.
 */
export function effectivePrefix(configured: string | undefined, providerName: string): string {
  if (configured === undefined) return `${providerName}:`;
  if (configured === "" || configured.endsWith(":")) return configured;
  return `${configured}:`;
}

/** Marks a subject name to be used as it is, without the provider's prefix (the marker itself is dropped). */
export const UNPREFIXED_MARKER = "::";

/**
 * A subject of `oidc.roleBindings` as it goes into a binding on the target cluster.
 *
 * Flow: `User` names get the username prefix and `Group` names the groups prefix ({@link oidcPrefixes}),
 * except names starting with `::`, which lose the `::` and get no prefix. `User` and `Group` subjects get
 * `apiGroup: rbac.authorization.k8s.io` when they have none (the API server's default, so what we write is what
 * it stores). Any other subject (`ServiceAccount`) is returned unchanged.
 *
 * Caveats: prefixing is not idempotent (a prefixed name would be prefixed again); feed it spec subjects only.
 */
export function oidcSubject(subject: Subject, oidc: OidcAccess): Subject {
  if (subject.kind !== "User" && subject.kind !== "Group") return subject;
  const prefixes = oidcPrefixes(oidc);
  const prefix = subject.kind === "User" ? prefixes.username : prefixes.groups;
  const name = subject.name.startsWith(UNPREFIXED_MARKER)
    ? subject.name.slice(UNPREFIXED_MARKER.length)
    : `${prefix}${subject.name}`;
  return { ...subject, name, apiGroup: subject.apiGroup || RBAC_GROUP };
}

/** An object found on the target cluster under a name we would use. */
export interface ExistingObject {
  /** Its kind, e.g. `Role`. */
  readonly kind: string;
  /** Its namespace; absent or empty for cluster-scoped objects. */
  readonly namespace?: string;
  /** Its name. */
  readonly name: string;
  /** Its labels. */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * Why the request must be denied because of what already exists on the target cluster, or undefined.
 *
 * Flow: goes through the objects the request needs ({@link desiredTokenAccess} or {@link desiredOidcAccess}) in
 * apply order and looks each up in `existing` by kind, namespace and name; the first one that exists without
 * {@link ACCESS_OWNER_LABEL} equal to this request's UID is the reason. Entries of `existing` we do not need
 * (and Namespaces, which are shared) are ignored.
 *
 * Guarantees: undefined when every existing object we need is labelled with our UID; the message names the
 * object as `Kind namespace/name` (`Kind name` when cluster-scoped) and, for a user-chosen name, the field to
 * change. Independent of the order of `existing`.
 */
export function rbacDenial(request: AccessRequest, existing: readonly ExistingObject[]): string | undefined {
  const uid = accessRequestIdentity(request).uid;
  const found = new Map(existing.map((object) => [objectKey(object), object]));
  for (const { object, source, userNamed } of planFor(request).planned) {
    const match = found.get(objectKey({ kind: object.kind, ...object.metadata }));
    if (match === undefined || match.labels?.[ACCESS_OWNER_LABEL] === uid) continue;
    const what = `${describeObject(object)} exists and is not managed by this AccessRequest`;
    return userNamed
      ? `${what}; choose another name (${source}.name)`
      : `${what}; remove it from the target cluster or recreate the AccessRequest`;
  }
  return undefined;
}

/**
 * What makes no sense in the request although the CRD schema admits it, or undefined: the first problem
 * found, prefixed with its field path.
 *
 * Checks what the target cluster's API server would reject (so the request is denied with a clear message
 * instead of failing on apply), mirroring Kubernetes' RBAC validation:
 * - rules: `verbs` not empty; a rule has either `nonResourceURLs` or resources, not both; `nonResourceURLs`
 *   only in a ClusterRole (a permission without namespace); a resource rule needs at least one entry in
 *   `apiGroups` (`""` is the core group: `apiGroups: [""]` is valid, a missing or empty list is not) and in
 *   `resources`;
 * - names: a permission or role reference name is a valid path segment (not `.` or `..`, no `/` or `%`);
 *   namespaces are DNS-1123 labels; a `Role` reference has a namespace; no two entries make the same object;
 * - OIDC subjects: kind `User`, `Group` or `ServiceAccount`; a name that is not empty once `::` is dropped;
 *   `apiGroup` `rbac.authorization.k8s.io` (or unset) for users and groups, unset for service accounts; a
 *   service account has a namespace (without one it matches nobody) and a DNS-1123 subdomain name.
 *
 * Valid RBAC is never rejected: an empty rule list, wildcards and unknown verbs or resources are fine.
 */
export function invalidRules(request: AccessRequest): string | undefined {
  const { token, oidc } = request.spec;
  const problems: (string | undefined)[] = [];
  if (token) {
    problems.push(
      ...(token.permissions ?? []).map((p, i) => permissionProblem(p, `token.permissions[${i}]`)),
    );
    problems.push(...(token.roleRefs ?? []).map((r, j) => roleRefProblem(r, `token.roleRefs[${j}]`)));
  }
  if (oidc) {
    problems.push(...(oidc.roles ?? []).map((p, i) => permissionProblem(p, `oidc.roles[${i}]`)));
    oidc.roleBindings.forEach((binding, k) => {
      const path = `oidc.roleBindings[${k}]`;
      problems.push(...binding.subjects.map((s, n) => subjectProblem(s, `${path}.subjects[${n}]`)));
      problems.push(...binding.roleRefs.map((r, j) => roleRefProblem(r, `${path}.roleRefs[${j}]`)));
    });
  }
  return problems.find((problem) => problem !== undefined) ?? duplicateProblem(planFor(request).planned);
}

// ——— Planning ———

function planFor(request: AccessRequest): Plan {
  return request.spec.token ? planToken(request) : planOidc(request);
}

function planToken(request: AccessRequest): Plan {
  const identity = accessRequestIdentity(request);
  const labels = accessLabels(identity);
  const permissions = request.spec.token?.permissions ?? [];
  const roleRefs = request.spec.token?.roleRefs ?? [];
  const account: Subject = {
    kind: "ServiceAccount",
    name: serviceAccountName(identity),
    namespace: ACCESS_NAMESPACE,
  };
  const serviceAccount: Planned = {
    object: {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: account.name, namespace: ACCESS_NAMESPACE, labels },
    },
    source: "token",
    userNamed: false,
  };
  const roles = planRoles(identity, permissions, "token.permissions");
  const permissionBindings = roles.map(({ object: role, source, userNamed }): Planned => {
    const { name, namespace } = role.metadata;
    return { object: binding(name, namespace, role.kind, name, [account], labels), source, userNamed };
  });
  const refBindings = roleRefs.flatMap((ref, j): Planned[] => {
    const object = bindingForRoleRef(ref, roleRefBindingName(identity, j), [account], labels);
    return object ? [{ object, source: `token.roleRefs[${j}]`, userNamed: false }] : [];
  });
  return {
    namespaces: unique([ACCESS_NAMESPACE, ...namespacesToCreate(permissions)]),
    planned: [serviceAccount, ...roles, ...permissionBindings, ...refBindings],
  };
}

function planOidc(request: AccessRequest): Plan {
  const identity = accessRequestIdentity(request);
  const labels = accessLabels(identity);
  const oidc = request.spec.oidc;
  if (!oidc) return { namespaces: [], planned: [] };
  const roles = oidc.roles ?? [];
  const bindings = oidc.roleBindings.flatMap((entry, k) => {
    const subjects = entry.subjects.map((subject) => oidcSubject(subject, oidc));
    return entry.roleRefs.flatMap((ref, j): Planned[] => {
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

function toDesired(plan: Plan): DesiredAccess {
  return { namespaces: plan.namespaces, objects: plan.planned.map((entry) => entry.object) };
}

function objectKey(object: { kind: string; namespace?: string | undefined; name: string }): string {
  return JSON.stringify([object.kind, object.namespace ?? "", object.name]);
}

function describeObject(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${object.kind} ${namespace}/${name}` : `${object.kind} ${name}`;
}

// ——— Validation ———

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function permissionProblem(permission: PermissionRequest, path: string): string | undefined {
  if (permission.name) {
    const problem = pathSegmentProblem(permission.name, `${path}.name`);
    if (problem) return problem;
  }
  if (permission.namespace) {
    const problem = namespaceProblem(permission.namespace, `${path}.namespace`);
    if (problem) return problem;
  }
  const namespaced = Boolean(permission.namespace);
  for (const [r, rule] of permission.rules.entries()) {
    const problem = ruleProblem(rule, namespaced, `${path}.rules[${r}]`);
    if (problem) return problem;
  }
  return undefined;
}

function ruleProblem(rule: PolicyRule, namespaced: boolean, path: string): string | undefined {
  if (rule.verbs.length === 0) return `${path}: verbs must contain at least one verb ("*" for all)`;
  if (isNotEmpty(rule.nonResourceURLs)) {
    if (namespaced) {
      return `${path}: nonResourceURLs are only allowed in a ClusterRole; remove the namespace of the permission or move these URLs to a permission without namespace`;
    }
    if (isNotEmpty(rule.apiGroups) || isNotEmpty(rule.resources) || isNotEmpty(rule.resourceNames)) {
      return `${path}: a rule covers either nonResourceURLs or resources (apiGroups, resources, resourceNames), not both; split it into two rules`;
    }
    return undefined;
  }
  if (!isNotEmpty(rule.apiGroups)) {
    return `${path}: a resource rule needs apiGroups; use [""] for the core group (pods, secrets, …) or ["*"] for all groups`;
  }
  if (!isNotEmpty(rule.resources)) return `${path}: a resource rule needs resources ("*" for all)`;
  return undefined;
}

function roleRefProblem(ref: RoleRef, path: string): string | undefined {
  const nameProblem = pathSegmentProblem(ref.name, `${path}.name`);
  if (nameProblem) return nameProblem;
  if (ref.namespace) return namespaceProblem(ref.namespace, `${path}.namespace`);
  if (ref.kind === "Role") return `${path}: a Role reference needs the namespace of the Role`;
  return undefined;
}

function subjectProblem(subject: Subject, path: string): string | undefined {
  switch (subject.kind) {
    case "User":
    case "Group": {
      const name = subject.name.startsWith(UNPREFIXED_MARKER)
        ? subject.name.slice(UNPREFIXED_MARKER.length)
        : subject.name;
      if (name === "") return `${path}.name: a ${subject.kind} needs a name`;
      if (subject.apiGroup && subject.apiGroup !== RBAC_GROUP) {
        return `${path}.apiGroup: must be ${RBAC_GROUP} (or unset) for a ${subject.kind}, not "${subject.apiGroup}"`;
      }
      return undefined;
    }
    case "ServiceAccount":
      if (!DNS_SUBDOMAIN.test(subject.name) || subject.name.length > 253) {
        return `${path}.name: "${subject.name}" is not a valid ServiceAccount name (a DNS-1123 subdomain)`;
      }
      if (subject.apiGroup)
        return `${path}.apiGroup: must be unset for a ServiceAccount, not "${subject.apiGroup}"`;
      if (!subject.namespace)
        return `${path}.namespace: a ServiceAccount subject needs the namespace of the account`;
      return namespaceProblem(subject.namespace, `${path}.namespace`);
    default:
      return `${path}.kind: must be User, Group or ServiceAccount, not "${subject.kind}"`;
  }
}

function pathSegmentProblem(name: string, path: string): string | undefined {
  if (name === "." || name === ".." || name.includes("/") || name.includes("%")) {
    return `${path}: "${name}" is not a valid role or binding name (it may not be "." or ".." or contain "/" or "%")`;
  }
  return undefined;
}

function namespaceProblem(namespace: string, path: string): string | undefined {
  if (DNS_LABEL.test(namespace) && namespace.length <= 63) return undefined;
  return `${path}: "${namespace}" is not a valid namespace name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', alphanumeric at both ends)`;
}

function duplicateProblem(planned: readonly Planned[]): string | undefined {
  const seen = new Map<string, Planned>();
  for (const entry of planned) {
    const key = objectKey({ kind: entry.object.kind, ...entry.object.metadata });
    const first = seen.get(key);
    if (first) {
      return `${first.source} and ${entry.source} both make ${describeObject(entry.object)}; give them different names`;
    }
    seen.set(key, entry);
  }
  return undefined;
}

function isNotEmpty(values: readonly string[] | undefined): boolean {
  return values !== undefined && values.length > 0;
}
