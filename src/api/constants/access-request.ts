/**
 * Constants of the AccessRequest kind: its labels, annotation, finalizer, conditions and reasons, its role kinds,
 * its OIDC default claims and the keys of its Secret.
 */

import { CLUSTERS_GROUP, ENGINE_GROUP } from "../constants.ts";

/** `kind` values of `token.roleRefs[]` and `oidc.roleBindings[].roleRefs[]` in an AccessRequest. */
export const ROLE_KINDS = ["Role", "ClusterRole"] as const;

/** Claims an OIDC access falls back to when `usernameClaim` / `groupsClaim` are not set. */
export const OIDC_DEFAULT_CLAIMS = { username: "sub", groups: "groups" } as const;

/** Keys of the Secret a granted AccessRequest points to with `status.secretRef`. */
export const ACCESS_SECRET_KEYS = {
  /** The kubeconfig for the target cluster; always present. */
  kubeconfig: "kubeconfig",
  /** Unix seconds (decimal string) when a token access was issued. */
  creationTimestamp: "creationTimestamp",
  /** Unix seconds (decimal string) when a token access stops working. */
  expirationTimestamp: "expirationTimestamp",
} as const;

/** Labels that preparation sets on AccessRequests, and that mark the objects made for one. */
export const ACCESS_REQUEST_LABELS = {
  /** Name of the ClusterProfile of a prepared AccessRequest. */
  profile: `${CLUSTERS_GROUP}/profile`,
  /** On objects made on a target cluster for an AccessRequest: that request's UID (its owner). */
  accessRequestUid: `${ENGINE_GROUP}/access-request-uid`,
} as const;

/** Annotations on an AccessRequest. */
export const ACCESS_REQUEST_ANNOTATIONS = {
  /**
   * On a Granted AccessRequest whose Cluster is reached on an internal address (its kubeconfig names
   * `apiserver-internal`): the API server's URL from the host, which tools out of cluster swap in (openMCP's).
   */
  localAccess: "clusters.open-control-plane.io/local-access",
} as const;

/** Finalizers on an AccessRequest. Each has a `/path` part, as the API server expects of domain-qualified names. */
export const ACCESS_REQUEST_FINALIZERS = {
  /** Ours on AccessRequests: access objects may still exist on the target cluster. */
  accessRequest: `${ENGINE_GROUP}/accessrequest`,
} as const;

/** Condition types of an AccessRequest beyond the shared ones. */
export const ACCESS_REQUEST_CONDITION_TYPES = {
  /** Access for an AccessRequest is in place. */
  accessGranted: "AccessGranted",
  /** Every role an AccessRequest binds by reference exists on the target cluster. */
  referencedRolesExist: "ReferencedRolesExist",
} as const;

/** Reasons of an AccessRequest's conditions and Events beyond the shared ones. */
export const ACCESS_REQUEST_REASONS = {
  InvalidReference: "InvalidReference",
  /** AccessRequest: a role it binds by reference does not exist on the target, so the binding grants nothing. */
  RoleMissing: "RoleMissing",
  /** AccessRequest: every role it binds by reference exists on the target. */
  RolesFound: "RolesFound",
  /** AccessRequest: the target cluster's API server refused the engine's admin access (401, 403). */
  TargetRefused: "TargetRefused",
  /** AccessRequest: the target cluster's API server cannot be reached (connection refused, TLS, timeout). */
  TargetUnreachable: "TargetUnreachable",
  /** AccessRequest: the target cluster's API server answered a call with another error (e.g. 404 of an API, 500). */
  TargetError: "TargetError",
  /** AccessRequest: it asks for more than the backend's namespaced admin access may give (cluster-wide rights, other namespaces). */
  OutsideAdminScope: "OutsideAdminScope",
} as const;

/**
 * Messages of the CEL rules of the AccessRequest CRD, exactly as the API server reports them.
 * The openMCP ones match upstream word for word; the others are ours.
 */
export const ACCESS_REQUEST_VALIDATION_MESSAGES = {
  /** AccessRequest: `spec.clusterRef` may not change (upstream). */
  clusterRefImmutable: "clusterRef is immutable",
  /** AccessRequest: `spec.clusterRef` may not be removed (upstream). */
  clusterRefNotRemovable: "clusterRef may not be removed once set",
  /** AccessRequest: `spec.requestRef` may not change (upstream). */
  requestRefImmutable: "requestRef is immutable",
  /** AccessRequest: `spec.requestRef` may not be removed (upstream). */
  requestRefNotRemovable: "requestRef may not be removed once set",
  /** AccessRequest: token and oidc exclude each other, one is needed (upstream). */
  exactlyOneAccessKind: "exactly one of spec.token or spec.oidc must be set",
  /** AccessRequest: an OIDC provider may not be called `system` (upstream). */
  oidcNameReserved: "'system' is a reserved string and may not be used as OIDC provider name",
  /** AccessRequest: a target is needed (ours; upstream documents it but does not enforce it). */
  targetRequired: "at least one of spec.clusterRef or spec.requestRef must be set",
  /** AccessRequest: its name leaves room for the Secret `<name>.kubeconfig` (ours). */
  accessRequestNameLength:
    "an AccessRequest name may have at most 242 characters, so that its Secret <name>.kubeconfig fits in 253",
  /** AccessRequest: the issuer must be an http(s) URL (ours; upstream uses a bare pattern). */
  issuerUrl: "issuer must be an http:// or https:// URL",
  /** AccessRequest: the ttl must be a positive Go-style duration (ours). */
  ttlDuration: "ttl must be a positive duration such as 30m, 1h or 1h30m",
} as const;
