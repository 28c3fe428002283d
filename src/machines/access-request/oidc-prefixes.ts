/** The user and group prefixes of an OIDC access, and its subjects with those prefixes as they go into bindings. Pure. */
import type { OidcAccess, Subject } from "../../api/access-request.ts";
import { RBAC_GROUP } from "./rbac-objects.ts";

/** The effective user and group prefixes of an OIDC access; see {@link effectivePrefix}. */
export interface OidcPrefixes {
  /** Put before every user name the issuer's tokens carry. */
  readonly username: string;
  /** Put before every group name the issuer's tokens carry. */
  readonly groups: string;
}

/**
 * The prefixes the target cluster's API server must put before names from this issuer, and that
 * {@link oidcSubject} puts before subject names, so that the two agree.
 */
export function oidcPrefixes(oidc: OidcAccess): OidcPrefixes {
  return {
    username: effectivePrefix(oidc.usernamePrefix, oidc.name),
    groups: effectivePrefix(oidc.groupsPrefix, oidc.name),
  };
}

/**
 * One configured prefix made effective: unset → `<name>:`; `""` → no prefix; anything else gets a trailing `:`
 * unless it has one (as openMCP's `OIDCProviderConfig.Default()` does).
 *
 * Guarantees: idempotent — configuring the result gives the result again.
 */
export function effectivePrefix(configured: string | undefined, providerName: string): string {
  if (configured === undefined) return `${providerName}:`;
  if (configured === "" || configured.endsWith(":")) return configured;
  return `${configured}:`;
}

/** Marks a subject name to be used as it is, without the provider's prefix (the marker itself is dropped). */
export const UNPREFIXED_MARKER = "::";

/**
 * A subject of `oidc.roleBindings` as it goes into a binding on the target cluster.
 *
 * Flow: `User` names get the username prefix and `Group` names the groups prefix ({@link oidcPrefixes}),
 * except names starting with `::`, which lose the `::` and get no prefix. `User` and `Group` subjects get
 * `apiGroup: rbac.authorization.k8s.io` when they have none (the API server's default, so what we write is what
 * it stores). Any other subject (`ServiceAccount`) is returned unchanged.
 *
 * Caveats: prefixing is not idempotent (a prefixed name would be prefixed again); feed it spec subjects only.
 */
export function oidcSubject(subject: Subject, oidc: OidcAccess): Subject {
  if (subject.kind !== "User" && subject.kind !== "Group") return subject;
  const prefixes = oidcPrefixes(oidc);
  const prefix = subject.kind === "User" ? prefixes.username : prefixes.groups;
  const name = subject.name.startsWith(UNPREFIXED_MARKER)
    ? subject.name.slice(UNPREFIXED_MARKER.length)
    : `${prefix}${subject.name}`;
  return { ...subject, name, apiGroup: subject.apiGroup || RBAC_GROUP };
}
