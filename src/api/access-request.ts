/** The AccessRequest kind (clusters.openmcp.cloud/v1alpha1): a request for token or OIDC access to one cluster. */

import type { RequestPhase } from "./cluster-request.ts";
import type { CommonStatus, LocalObjectReference, ObjectReference, TypedObject } from "./common.ts";
import type { ROLE_KINDS } from "./constants/access-request.ts";
import type { CLUSTERS_API_VERSION } from "./constants.ts";

/** `Role` or `ClusterRole`. */
export type RoleKind = (typeof ROLE_KINDS)[number];

/** One RBAC policy rule, as in a Role or ClusterRole. */
export interface PolicyRule {
  /** API groups of the resources; `""` is the core group, `"*"` all groups. */
  readonly apiGroups?: readonly string[];
  /** Resources covered; `"*"` covers all. */
  readonly resources?: readonly string[];
  /** When not empty, only objects with these names are covered. */
  readonly resourceNames?: readonly string[];
  /** Non-resource paths covered (ClusterRoles only). */
  readonly nonResourceURLs?: readonly string[];
  /** Allowed verbs; `"*"` allows all. */
  readonly verbs: readonly string[];
}

/** Rules that become a ClusterRole (no namespace) or a Role in `namespace` on the target cluster. */
export interface PermissionRequest {
  /** Name of the role to create; generated when empty. */
  readonly name?: string;
  /** Namespace of the Role; empty for a ClusterRole. */
  readonly namespace?: string;
  /** When true, a missing namespace is not created (default false). */
  readonly disableAutomaticNamespaceCreation?: boolean;
  /** The rules of the role. */
  readonly rules: readonly PolicyRule[];
}

/** A reference to an existing Role or ClusterRole on the target cluster. */
export interface RoleRef {
  /** `Role` or `ClusterRole`. */
  readonly kind: RoleKind;
  /** Name of the role. */
  readonly name: string;
  /** Namespace of a Role; empty for a ClusterRole. */
  readonly namespace?: string;
}

/** Token-based access: a service account bound to the requested permissions and roles. */
export interface TokenAccess {
  /** Roles to create and bind to the service account. */
  readonly permissions?: readonly PermissionRequest[];
  /** Existing roles to bind to the service account. */
  readonly roleRefs?: readonly RoleRef[];
}

/** A subject of a role binding, as in RBAC. */
export interface Subject {
  /** `User`, `Group` or `ServiceAccount`. */
  readonly kind: string;
  /** Name without the provider's prefix; a leading `::` means "use as is" (the `::` is stripped). */
  readonly name: string;
  /** API group of the subject. */
  readonly apiGroup?: string;
  /** Namespace of a service account. */
  readonly namespace?: string;
}

/** Subjects and the roles they are bound to. */
export interface RoleBinding {
  /** Who is bound. */
  readonly subjects: readonly Subject[];
  /** What they are bound to. */
  readonly roleRefs: readonly RoleRef[];
}

/** OIDC-based access: the target cluster trusts an issuer, and its users and groups get role bindings. */
export interface OidcAccess {
  /** Provider name: a DNS-1123 subdomain other than `system`. */
  readonly name: string;
  /** Issuer URL (http or https). */
  readonly issuer: string;
  /** Client ID the tokens are issued for. */
  readonly clientID: string;
  /** Claim holding the user name (the API server defaults it to `sub`). */
  readonly usernameClaim?: string;
  /** Claim holding the groups (the API server defaults it to `groups`). */
  readonly groupsClaim?: string;
  /** Prefix of user names: unset means `<name>:`, `""` means none. */
  readonly usernamePrefix?: string;
  /** Prefix of group names: unset means `<name>:`, `""` means none. */
  readonly groupsPrefix?: string;
  /** Additional scopes for the login client. */
  readonly extraScopes?: readonly string[];
  /** Bindings to create; may be empty. */
  readonly roleBindings: readonly RoleBinding[];
  /** Roles to create; not bound automatically. */
  readonly roles?: readonly PermissionRequest[];
}

/** Where the access goes: a Cluster, or the Cluster granted to a ClusterRequest (clusterRef wins). */
export interface AccessTarget {
  /** The Cluster; immutable and never removed once set. */
  readonly clusterRef?: ObjectReference;
  /** The ClusterRequest; immutable and never removed once set. */
  readonly requestRef?: ObjectReference;
  /** Lifetime from creationTimestamp as a Go duration (`1h`); absent means no expiry. */
  readonly ttl?: string;
}

/** What is requested: a target and exactly one of `token` and `oidc`. */
export type AccessRequestSpec = AccessTarget &
  (
    | { readonly token: TokenAccess; readonly oidc?: never }
    | { readonly oidc: OidcAccess; readonly token?: never }
  );

/** How the request was answered. */
export interface AccessRequestStatus extends CommonStatus<RequestPhase> {
  /** The Secret in the request's namespace holding the access (see `ACCESS_SECRET_KEYS`). */
  readonly secretRef?: LocalObjectReference;
}

/** A request for access to one cluster. */
export interface AccessRequest extends TypedObject<typeof CLUSTERS_API_VERSION, "AccessRequest"> {
  /** What is requested. */
  readonly spec: AccessRequestSpec;
  /** The answer; absent until a provider first writes it. */
  readonly status?: AccessRequestStatus;
}
