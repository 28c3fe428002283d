/** Constants of the ClusterRequestGrant kind: its CEL messages. */

/** Messages of the CEL rules of the ClusterRequestGrant CRD, exactly as the API server reports them. */
export const CLUSTER_REQUEST_GRANT_VALIDATION_MESSAGES = {
  /** ClusterRequestGrant: the whole spec may not change; the scheduler replaces a grant instead (ours). */
  grantSpecImmutable: "spec is immutable",
} as const;
