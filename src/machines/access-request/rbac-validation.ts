/** When an AccessRequest cannot have what it asks for: invalid rules, and objects on the target cluster that are not ours. Pure. */
import type {
  AccessRequest,
  PermissionRequest,
  PolicyRule,
  RoleRef,
  Subject,
} from "../../api/access-request.ts";
import { ACCESS_OWNER_LABEL, accessRequestIdentity } from "./names.ts";
import { UNPREFIXED_MARKER } from "./oidc-prefixes.ts";
import { type KubeObject, RBAC_GROUP } from "./rbac-objects.ts";
import { type AccessPlan, accessPlan, type PlannedObject } from "./rbac-plan.ts";

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
 * Flow: goes through the objects the request needs (`plan`, by default {@link accessPlan}: those `desiredTokenAccess` or
 * `desiredOidcAccess` make) in apply order and looks each up in `existing` by kind, namespace and name; the
 * first one that exists without {@link ACCESS_OWNER_LABEL} equal to this request's UID is the reason. Entries
 * of `existing` we do not need (and Namespaces, which are shared) are ignored.
 *
 * Guarantees: undefined when every existing object we need is labelled with our UID; the message names the
 * object as `Kind namespace/name` (`Kind name` when cluster-scoped) and, for a user-chosen name, the field to
 * change. Independent of the order of `existing`.
 */
export function rbacDenial(
  request: AccessRequest,
  existing: readonly ExistingObject[],
  plan: AccessPlan = accessPlan(request),
): string | undefined {
  const uid = accessRequestIdentity(request).uid;
  const found = new Map(existing.map((object) => [rbacKey(object), object]));
  for (const { object, source, userNamed } of plan.planned) {
    const match = found.get(rbacKey({ kind: object.kind, ...object.metadata }));
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
 * - permissions: at least one rule (a role without rules grants nothing; the CRD refuses it too, this catches
 *   objects stored before it did);
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
 * Otherwise valid RBAC is never rejected: wildcards and unknown verbs or resources are fine.
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
  return problems.find((problem) => problem !== undefined) ?? duplicateProblem(accessPlan(request).planned);
}

function rbacKey(object: { kind: string; namespace?: string | undefined; name: string }): string {
  return JSON.stringify([object.kind, object.namespace ?? "", object.name]);
}

function describeObject(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${object.kind} ${namespace}/${name}` : `${object.kind} ${name}`;
}

// ——— Rules ———

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
  if (permission.rules.length === 0) {
    return `${path}.rules: a permission needs at least one rule; a role without rules grants nothing (remove the permission, or add the rules it should grant)`;
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

function duplicateProblem(planned: readonly PlannedObject[]): string | undefined {
  const seen = new Map<string, PlannedObject>();
  for (const entry of planned) {
    const key = rbacKey({ kind: entry.object.kind, ...entry.object.metadata });
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
