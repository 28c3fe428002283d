/**
 * Whether an object that names a ClusterProfile is this provider's to act on: the contract's "ClusterProviders
 * must only ever act on Cluster resources that reference profiles belonging to themselves". Pure.
 */
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import { LABELS } from "../../api/constants.ts";

/** The provider an engine acts for: its `--provider-name` and `--environment`, and the profile names it claims. */
export interface ProfileClaimant {
  readonly providerName: string;
  readonly environment: string;
  /**
   * The names its ProviderConfigs (those whose `spec.providerRef.name` is this provider) give their profiles
   * in `spec.profileName`: names of another shape (e.g. `kind`) that are still ours when missing.
   */
  readonly claimedProfiles: ReadonlySet<string>;
}

/** What names the profile: the name, and the object's labels (another provider may label its objects). */
export interface ProfileReferrer {
  readonly profileName: string | undefined;
  readonly labels?: { readonly [key: string]: string } | undefined;
}

/**
 * How an engine stands to a reference to a profile:
 * - `ours`: the profile exists and names this provider.
 * - `missing`: no such profile, but the name has this provider's shape (`<environment>.<provider-name>.…`)
 *   or is one a ProviderConfig of ours claims in `spec.profileName`, and no `clusters.openmcp.cloud/provider`
 *   label names another provider: ours to report the missing profile on (it may not be published yet, its
 *   name may be taken, or its config was mistyped).
 * - `foreign`: the profile names another provider, or it is missing and the name or a label says the
 *   object is another's (openMCP's workspace Clusters name `kcp-workspace`, which no profile carries).
 *   Nothing at all is written to such an object.
 */
export type ProfileReference = "ours" | "missing" | "foreign";

/**
 * Decides {@link ProfileReference}. `ownKind`: the object is of one of the engine's own kinds (EngineCluster,
 * EngineControlPlane), never another provider's, so a missing profile of any name is reported, by the first
 * engine to label it with its provider (the label keeps a second engine on the cluster from answering too).
 */
export function profileReference(
  referrer: ProfileReferrer,
  profile: ClusterProfile | undefined,
  claimant: ProfileClaimant,
  ownKind = false,
): ProfileReference {
  if (profile) return profile.spec.providerRef.name === claimant.providerName ? "ours" : "foreign";
  const labelled = referrer.labels?.[LABELS.provider];
  if (labelled !== undefined && labelled !== claimant.providerName) return "foreign";
  const name = referrer.profileName;
  if (name === undefined) return "foreign";
  if (ownKind) return "missing";
  const ourShape = `${claimant.environment}.${claimant.providerName}.`;
  return name.startsWith(ourShape) || claimant.claimedProfiles.has(name) ? "missing" : "foreign";
}
