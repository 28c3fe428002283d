/**
 * The OIDC issuers a cluster must trust for the OIDC AccessRequests that target it: one entry per issuer
 * URL, the client IDs of all its requests as audiences. Pure.
 */
import type { AccessRequest } from "../../api/access-request.ts";
import type { OidcTrust } from "../../api/backend-contract.ts";
import { OIDC_DEFAULT_CLAIMS } from "../../api/constants.ts";
import { oidcPrefixes } from "./oidc-prefixes.ts";

/** What the requests ask the cluster to trust, and the requests that cannot share it (by key). */
export interface OidcTrustPlan {
  readonly issuers: readonly OidcTrust[];
  /** Requests whose issuer is trusted already with other claims or prefixes: `namespace/name` → why. */
  readonly conflicts: ReadonlyMap<string, string>;
}

const keyOf = (request: AccessRequest) => `${request.metadata.namespace}/${request.metadata.name}`;

/**
 * Flow: the requests in creation order (older first, name as tie-break); the first request of an issuer
 * fixes its claims and prefixes; later ones with the same mapping add their client ID; later ones with
 * another mapping conflict (an API server trusts an issuer URL once).
 */
export function oidcTrustPlan(requests: readonly AccessRequest[]): OidcTrustPlan {
  const ordered = [...requests]
    .filter((request) => request.spec.oidc)
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
        keyOf(a).localeCompare(keyOf(b)),
    );
  const byIssuer = new Map<string, { trust: OidcTrust; owner: string }>();
  const conflicts = new Map<string, string>();
  for (const request of ordered) {
    const oidc = request.spec.oidc;
    if (!oidc) continue;
    const prefixes = oidcPrefixes(oidc);
    const wanted: OidcTrust = {
      issuer: oidc.issuer,
      audiences: [oidc.clientID],
      usernameClaim: oidc.usernameClaim || OIDC_DEFAULT_CLAIMS.username,
      usernamePrefix: prefixes.username,
      groupsClaim: oidc.groupsClaim || OIDC_DEFAULT_CLAIMS.groups,
      groupsPrefix: prefixes.groups,
    };
    const existing = byIssuer.get(oidc.issuer);
    if (!existing) {
      byIssuer.set(oidc.issuer, { trust: wanted, owner: keyOf(request) });
      continue;
    }
    const { trust } = existing;
    const same =
      trust.usernameClaim === wanted.usernameClaim &&
      trust.usernamePrefix === wanted.usernamePrefix &&
      trust.groupsClaim === wanted.groupsClaim &&
      trust.groupsPrefix === wanted.groupsPrefix;
    if (!same) {
      conflicts.set(
        keyOf(request),
        `issuer ${oidc.issuer} is trusted on this cluster for AccessRequest ${existing.owner} with other claims or prefixes; use the same ones, or another issuer`,
      );
      continue;
    }
    if (!trust.audiences.includes(oidc.clientID)) {
      byIssuer.set(oidc.issuer, {
        ...existing,
        trust: { ...trust, audiences: [...trust.audiences, oidc.clientID] },
      });
    }
  }
  return { issuers: [...byIssuer.values()].map((entry) => entry.trust), conflicts };
}
