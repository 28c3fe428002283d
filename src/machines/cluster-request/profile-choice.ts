/** Which ClusterProfile a new Cluster is made from: the template's, unless the request's traits need another. */
import { describeWish, matchTraits, type TraitWish } from "./traits.ts";

/** The chosen profile, or the required wishes no profile meets. */
export type ProfileChoice =
  | { readonly profile: string }
  | { readonly missing: readonly TraitWish[]; readonly message: string };

/**
 * Without wishes the template's profile, as openMCP does (even if it is not known yet). With wishes,
 * the template's profile and every known one are candidates (a profile not known yet offers nothing
 * known): those meeting all required wishes, most optional ones first, the template's profile on a
 * tie, then by name. Optional wishes only rank: with no required wish the template's profile always
 * qualifies. None → the required wishes the template's profile misses, named in the message.
 */
export function chooseProfile(
  templateProfile: string,
  wishes: readonly TraitWish[],
  profileTraits: ReadonlyMap<string, readonly string[]>,
): ProfileChoice {
  if (wishes.length === 0) return { profile: templateProfile };
  const candidates = [...new Set([templateProfile, ...profileTraits.keys()])].sort((a, b) =>
    a === templateProfile ? -1 : b === templateProfile ? 1 : a.localeCompare(b),
  );
  let chosen: { profile: string; preferred: number } | undefined;
  for (const profile of candidates) {
    const match = matchTraits(wishes, profileTraits.get(profile) ?? []);
    if (match.admissible && (chosen === undefined || match.preferred > chosen.preferred)) {
      chosen = { profile, preferred: match.preferred };
    }
  }
  if (chosen) return { profile: chosen.profile };
  const reference = profileTraits.get(templateProfile);
  const missing = matchTraits(wishes, reference ?? []).missing;
  const named = missing.map(describeWish).join(", ");
  return {
    missing,
    message: reference
      ? `no ClusterProfile offers the required traits: ${named} (profile ${templateProfile} of the purpose's template lacks them, and no other profile has them all)`
      : `no ClusterProfile offers the required traits: ${named} (profile ${templateProfile} of the purpose's template is not known yet)`,
  };
}
