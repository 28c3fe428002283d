/**
 * kube-apiserver's structured authentication configuration for OIDC trust, shared by the backends whose clusters
 * are real kube-apiservers (local, kind, gardener): the file lists one JWT authenticator per trusted issuer URL,
 * and kube-apiserver reloads it on change. On `local` each cluster's kube-apiserver runs with
 * `--authentication-config` pointing at `authentication.yaml` in its folder.
 */
import { X509Certificate } from "node:crypto";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import type { OidcTrust } from "../../api/backend-contract.ts";
import { MAX_TRUSTED_ISSUERS, oidcIssuerProblem } from "../../machines/access-request/oidc-issuer.ts";
import { sameMapping } from "../../machines/access-request/oidc-trust.ts";
import { writeFileAtomically } from "../../util/atomic-file.ts";

/** Where a cluster's authentication configuration lives. */
export const authenticationConfigPath = (directory: string): string => join(directory, "authentication.yaml");

/**
 * The configuration for `issuers` (none: only the cluster's own certificates and tokens authenticate).
 *
 * Flow: entries are grouped by issuer URL, in order of first appearance; each URL becomes one JWT
 * authenticator whose audiences are all its entries' audiences. A URL with one mapping gets plain claim
 * mappings (`claim` + `prefix`); a URL with several gets CEL expressions that pick the mapping by the token's
 * audience (`aud`, a string or a list), so two requests for one issuer keep their own prefixes. Every
 * authenticator refuses tokens that would name a `system:` user or group.
 *
 * Guarantees: throws (and so nothing is written) rather than return a configuration kube-apiserver would
 * refuse as a whole: an invalid issuer URL, more than 64 URLs, one audience with two mappings, or a
 * `certificateAuthority` that holds no PEM certificate.
 */
export function authenticationConfig(issuers: readonly OidcTrust[], certificateAuthority?: string): string {
  const problem = configurationProblem(issuers, certificateAuthority);
  if (problem) throw new Error(`OIDC trust not written: ${problem}`);
  const byUrl = new Map<string, OidcTrust[]>();
  for (const trust of issuers) byUrl.set(trust.issuer, [...(byUrl.get(trust.issuer) ?? []), trust]);
  return stringify({
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AuthenticationConfiguration",
    jwt: [...byUrl].map(([url, entries]) => {
      const audiences = [...new Set(entries.flatMap((entry) => entry.audiences))];
      return {
        issuer: {
          url,
          audiences,
          ...(audiences.length > 1 ? { audienceMatchPolicy: "MatchAny" } : {}),
          ...(certificateAuthority ? { certificateAuthority } : {}),
        },
        claimMappings: claimMappings(entries),
        userValidationRules: RESERVED_NAMES_RULES,
      };
    }),
  });
}

/**
 * Why: with an empty prefix (which a request may ask for) an issuer's tokens could name `system:` users or
 * groups — `system:masters` is cluster-admin. kube-apiserver refuses such tokens under these rules.
 */
const RESERVED_NAMES_RULES = [
  {
    expression: "!user.username.startsWith('system:')",
    message: "OIDC user names may not start with the reserved prefix system:",
  },
  {
    expression: "user.groups.all(group, !group.startsWith('system:'))",
    message: "OIDC groups may not start with the reserved prefix system:",
  },
];

/** Why kube-apiserver would refuse the configuration for `issuers`, or undefined. */
function configurationProblem(
  issuers: readonly OidcTrust[],
  certificateAuthority: string | undefined,
): string | undefined {
  for (const trust of issuers) {
    const problem = oidcIssuerProblem(trust.issuer);
    if (problem) return problem;
    if (trust.audiences.length === 0 || trust.audiences.some((audience) => audience === "")) {
      return `issuer ${trust.issuer} needs at least one audience, none empty`;
    }
    const clash = issuers.find(
      (other) =>
        other.issuer === trust.issuer &&
        !sameMapping(other, trust) &&
        other.audiences.some((audience) => trust.audiences.includes(audience)),
    );
    if (clash) return `issuer ${trust.issuer} has two mappings for one audience`;
  }
  const urls = new Set(issuers.map((trust) => trust.issuer)).size;
  if (urls > MAX_TRUSTED_ISSUERS)
    return `${urls} issuers, more than the ${MAX_TRUSTED_ISSUERS} kube-apiserver accepts`;
  if (certificateAuthority !== undefined && certificateAuthority !== "") {
    return certificateAuthorityProblem(certificateAuthority);
  }
  return undefined;
}

/** As client-go's `cert.NewPoolFromBytes`: at least one CERTIFICATE block, and every such block parses. */
function certificateAuthorityProblem(pem: string): string | undefined {
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) return "the OIDC certificate authority holds no PEM certificate";
  for (const [block] of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      return "the OIDC certificate authority holds a certificate that does not parse";
    }
  }
  return undefined;
}

/** A string as a CEL string literal (JSON's escapes are all valid in CEL). */
const cel = (value: string): string => JSON.stringify(value);

/** CEL: the token was issued for `audience` (`aud` is a string or a list of strings). */
const audienceIs = (audience: string): string =>
  `(type(claims.aud) == string ? claims.aud == ${cel(audience)} : ${cel(audience)} in claims.aud)`;

/** CEL: the user name of one mapping; for `email`, as the claim mapping does, only if not unverified. */
function userExpression(trust: OidcTrust): string {
  if (trust.usernameClaim === "email") {
    return `(claims.?email_verified.orValue(true) == true ? ${cel(trust.usernamePrefix)} + claims.email : "")`;
  }
  return `${cel(trust.usernamePrefix)} + claims[${cel(trust.usernameClaim)}]`;
}

/** CEL: the groups of one mapping: the claim as a string or a list, each prefixed; none when absent. */
function groupsExpression(trust: OidcTrust): string {
  const claim = `claims[${cel(trust.groupsClaim)}]`;
  const prefix = cel(trust.groupsPrefix);
  // dyn(): a claim is of type `any`, which CEL does not take as the range of map().
  return `(claims[?${cel(trust.groupsClaim)}].hasValue() ? (type(${claim}) == string ? [${prefix} + ${claim}] : (type(${claim}) == list ? dyn(${claim}).map(g, ${prefix} + g) : [])) : [])`;
}

/** Claim mappings for the entries of one issuer URL. */
function claimMappings(entries: readonly OidcTrust[]): Record<string, unknown> {
  const [first] = entries;
  if (first && entries.every((entry) => sameMapping(entry, first))) {
    return {
      username: { claim: first.usernameClaim, prefix: first.usernamePrefix },
      groups: { claim: first.groupsClaim, prefix: first.groupsPrefix },
    };
  }
  // The last entry needs no test: MatchAny has made sure the token is for one of the audiences.
  const choose = (expression: (trust: OidcTrust) => string): string =>
    entries.reduceRight(
      (otherwise, entry, index) =>
        index === entries.length - 1
          ? expression(entry)
          : `(${entry.audiences.map(audienceIs).join(" || ")}) ? ${expression(entry)} : ${otherwise}`,
      "",
    );
  return {
    username: { expression: choose(userExpression) },
    groups: { expression: choose(groupsExpression) },
  };
}

/** Writes the configuration atomically (kube-apiserver never reads half a file); throws, writing nothing, on one it would refuse. */
export async function writeAuthenticationConfig(
  directory: string,
  issuers: readonly OidcTrust[],
  certificateAuthority?: string,
): Promise<void> {
  const path = authenticationConfigPath(directory);
  await writeFileAtomically(path, authenticationConfig(issuers, certificateAuthority), { mode: 0o600 });
}

/** A cluster started for the first time trusts no issuer; one that has a configuration keeps it. */
export async function ensureAuthenticationConfig(directory: string): Promise<void> {
  try {
    await access(authenticationConfigPath(directory));
  } catch {
    await writeAuthenticationConfig(directory, []);
  }
}
