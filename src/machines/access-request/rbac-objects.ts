/** The RBAC objects an AccessRequest gets on its target cluster, as plain JSON: their API group and shapes. */
import type { PolicyRule, RoleKind, Subject } from "../../api/access-request.ts";

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
  /** The owner label `ACCESS_OWNER_LABEL` (names.ts) and `app.kubernetes.io/managed-by`. */
  readonly labels: Readonly<Record<string, string>>;
};

/** The ServiceAccount of a token access. */
export type ServiceAccountObject = {
  readonly apiVersion: "v1";
  readonly kind: "ServiceAccount";
  readonly metadata: KubeObjectMeta;
};

/** A Role (namespaced) or ClusterRole made from a `PermissionRequest`. */
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
