/** Constants of the AccessRequest kind: its role kinds, its OIDC default claims and the keys of its Secret. */

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
