/**
 * Whether kube-apiserver would accept an OIDC issuer in its structured authentication configuration. Pure.
 *
 * Why: kube-apiserver refuses the whole `AuthenticationConfiguration` when one JWT authenticator is invalid, so
 * one bad issuer would stop every other issuer's trust from changing. Everything it refuses is caught here first.
 */

/** The most JWT authenticators (distinct issuer URLs) one AuthenticationConfiguration may hold. */
export const MAX_TRUSTED_ISSUERS = 64;

/** Longest issuer URL the AccessRequest CRD admits. */
const MAX_ISSUER_LENGTH = 2048;

/**
 * Why kube-apiserver (apiserver.config.k8s.io/v1, `validateURL`) would refuse `issuer` as `jwt[].issuer.url`,
 * or undefined when it would not.
 *
 * Mirrors: a URL that parses, scheme `https`, no user or password, no query, no fragment, not one of
 * `disallowed` (the cluster's own service-account issuers). Stricter where Go's parser and the WHATWG one
 * differ, so that what passes here passes there: no control characters or spaces anywhere, no `%` that does
 * not start an escape, no `@`, `?` or `#`
 * at all (Go accepts an empty query or fragment; nobody needs one), and a host.
 */
export function oidcIssuerProblem(issuer: string, disallowed: readonly string[] = []): string | undefined {
  const what = `OIDC issuer "${issuer}"`;
  if (issuer.length === 0) return "the OIDC issuer is empty";
  if (issuer.length > MAX_ISSUER_LENGTH)
    return `the OIDC issuer is longer than ${MAX_ISSUER_LENGTH} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u0020\u007f]/.test(issuer)) return `${what} contains a space or a control character`;
  if (!issuer.startsWith("https://")) {
    return `${what} is not an https:// URL; kube-apiserver trusts only issuers served over https`;
  }
  // Go's parser refuses a `%` that does not start an escape; WHATWG's lets it through.
  if (/%(?![0-9A-Fa-f]{2})/.test(issuer)) return `${what} has a "%" that is not followed by two hex digits`;
  let parsed: URL;
  try {
    parsed = new URL(issuer);
  } catch {
    return `${what} is not a valid URL`;
  }
  const authority = issuer.slice("https://".length).split("/")[0] ?? "";
  if (authority.includes("@") || parsed.username || parsed.password) {
    return `${what} must not contain a user name or password`;
  }
  if (issuer.includes("?")) return `${what} must not contain a query (?…)`;
  if (issuer.includes("#")) return `${what} must not contain a fragment (#…)`;
  if (authority === "" || parsed.hostname === "") return `${what} has no host`;
  if (disallowed.includes(issuer)) {
    return `${what} is the target cluster's own service-account issuer, which kube-apiserver does not accept as an OIDC issuer`;
  }
  return undefined;
}
