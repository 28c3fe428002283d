/** Constants of the ClusterProfile kind: its CEL messages. */

/** Messages of the CEL rules of the ClusterProfile CRD, exactly as the API server reports them. */
export const CLUSTER_PROFILE_VALIDATION_MESSAGES = {
  /** ClusterProfile: `spec.providerConfigRef.name` doubles as a label value (ours). */
  providerConfigRefLabelValue:
    "providerConfigRef.name must be a valid label value: at most 63 characters, alphanumeric at both ends, with only '-', '_' or '.' in between",
} as const;
