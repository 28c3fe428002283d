/**
 * The OIDC issuers a cluster must trust for the OIDC AccessRequests that target it: one entry per issuer URL
 * and name mapping (claims and prefixes), the client IDs of its requests as audiences. Pure.
 */

import type { AccessRequest } from "../../api/access-request.ts";
import type { OidcTrust } from "../../api/backend-contract.ts";
import { OIDC_DEFAULT_CLAIMS } from "../../api/constants/access-request.ts";
import { REQUEST_PHASES } from "../../api/constants.ts";
import { objectKey } from "../../api/object-key.ts";
import { MAX_TRUSTED_ISSUERS, oidcIssuerProblem } from "./oidc-issuer.ts";
import { oidcPrefixes } from "./oidc-prefixes.ts";

/** What the requests ask the cluster to trust, and the requests that cannot share it (by key). */
export interface OidcTrustPlan {
  /**
   * The trust entries, in a stable order. One issuer URL may appear in several entries with different
   * mappings; their audiences never overlap (see {@link OidcTrust}).
   */
  readonly issuers: readonly OidcTrust[];
  /** Requests that cannot be served beside the others: `namespace/name` → why, naming the other request. */
  readonly conflicts: ReadonlyMap<string, string>;
}

/** The trust entry one OIDC access asks for (a single audience: its client ID). */
export function oidcTrustOf(oidc: NonNullable<AccessRequest["spec"]["oidc"]>): OidcTrust {
  const prefixes = oidcPrefixes(oidc);
  return {
    issuer: oidc.issuer,
    audiences: [oidc.clientID],
    usernameClaim: oidc.usernameClaim || OIDC_DEFAULT_CLAIMS.username,
    usernamePrefix: prefixes.username,
    groupsClaim: oidc.groupsClaim || OIDC_DEFAULT_CLAIMS.groups,
    groupsPrefix: prefixes.groups,
  };
}

/** Whether two entries map token claims to the same user and group names. */
export function sameMapping(a: OidcTrust, b: OidcTrust): boolean {
  return (
    a.usernameClaim === b.usernameClaim &&
    a.usernamePrefix === b.usernamePrefix &&
    a.groupsClaim === b.groupsClaim &&
    a.groupsPrefix === b.groupsPrefix
  );
}

/** The mapping of an entry in words, for messages. */
export function describeMapping(trust: OidcTrust): string {
  return `user names from claim ${trust.usernameClaim} prefixed "${trust.usernamePrefix}", groups from claim ${trust.groupsClaim} prefixed "${trust.groupsPrefix}"`;
}

/**
 * Flow: requests whose issuer kube-apiserver would refuse are left out (they are denied on their own); the
 * rest in order of precedence — Granted ones first (what works keeps working), then by creation (older
 * first), name as tie-break. A request joins the entry of its issuer with its mapping (adding its client ID
 * as an audience), or starts a new entry beside the issuer's others. It conflicts when its issuer and client
 * ID are already trusted with another mapping (a token for one audience can map to one set of names only),
 * or when it needs a new issuer URL and the cluster trusts {@link MAX_TRUSTED_ISSUERS} already.
 *
 * Guarantees: within one issuer URL, no audience is in two entries; at most {@link MAX_TRUSTED_ISSUERS}
 * distinct issuer URLs; every issuer passes {@link oidcIssuerProblem}; a conflict names the request it
 * yields to.
 */
export function oidcTrustPlan(requests: readonly AccessRequest[]): OidcTrustPlan {
  const rank = (request: AccessRequest) => (request.status?.phase === REQUEST_PHASES.granted ? 0 : 1);
  const ordered = requests
    .filter((request) => request.spec.oidc && !oidcIssuerProblem(request.spec.oidc.issuer))
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
        objectKey(a).localeCompare(objectKey(b)),
    );
  const entries: { trust: OidcTrust; owners: Map<string, string> }[] = [];
  const issuerOwners = new Map<string, string>();
  const conflicts = new Map<string, string>();
  for (const request of ordered) {
    const oidc = request.spec.oidc;
    if (!oidc) continue;
    const wanted = oidcTrustOf(oidc);
    const ofIssuer = entries.filter((entry) => entry.trust.issuer === oidc.issuer);
    const holder = ofIssuer.find((entry) => entry.owners.has(oidc.clientID));
    if (holder) {
      if (!sameMapping(holder.trust, wanted)) {
        conflicts.set(
          objectKey(request),
          `issuer ${oidc.issuer} with client ID ${oidc.clientID} is trusted on this cluster for AccessRequest ${holder.owners.get(oidc.clientID)} with ${describeMapping(holder.trust)}; tokens for one client ID can map to one set of names only: use the same claims and prefixes, or another client ID`,
        );
      }
      continue;
    }
    if (!issuerOwners.has(oidc.issuer) && issuerOwners.size >= MAX_TRUSTED_ISSUERS) {
      conflicts.set(
        objectKey(request),
        `this cluster trusts ${MAX_TRUSTED_ISSUERS} OIDC issuers already, the most kube-apiserver accepts; use an issuer one of its other AccessRequests uses`,
      );
      continue;
    }
    if (!issuerOwners.has(oidc.issuer)) issuerOwners.set(oidc.issuer, objectKey(request));
    const joined = ofIssuer.find((entry) => sameMapping(entry.trust, wanted));
    if (joined) {
      joined.trust = { ...joined.trust, audiences: [...joined.trust.audiences, oidc.clientID] };
      joined.owners.set(oidc.clientID, objectKey(request));
    } else {
      entries.push({ trust: wanted, owners: new Map([[oidc.clientID, objectKey(request)]]) });
    }
  }
  return { issuers: entries.map((entry) => entry.trust), conflicts };
}
