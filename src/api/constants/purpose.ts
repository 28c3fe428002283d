/** Constants of the Purpose kind: its CEL messages. */

/** Messages of the CEL rules of the Purpose CRD, exactly as the API server reports them. */
export const PURPOSE_VALIDATION_MESSAGES = {
  /** Purpose: each entry of `spec.traits` names its trait one way (ours). */
  purposeTraitOrAnyOf: "exactly one of trait and anyOf must be set",
} as const;
