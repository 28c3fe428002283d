/**
 * The `local` backend's OIDC trust: each cluster's kube-apiserver runs with `--authentication-config`
 * pointing at `authentication.yaml` in its folder (structured authentication configuration), which it
 * reloads on change; the file lists one JWT authenticator per trusted issuer.
 */
import { access, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import type { OidcTrust } from "../api/backend-contract.ts";

/** Where a cluster's authentication configuration lives. */
export const authenticationConfigPath = (directory: string): string => join(directory, "authentication.yaml");

/** The configuration for `issuers` (none: only the cluster's own certificates and tokens authenticate). */
export function authenticationConfig(issuers: readonly OidcTrust[], certificateAuthority?: string): string {
  return stringify({
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AuthenticationConfiguration",
    jwt: issuers.map((trust) => ({
      issuer: {
        url: trust.issuer,
        audiences: [...trust.audiences],
        ...(trust.audiences.length > 1 ? { audienceMatchPolicy: "MatchAny" } : {}),
        ...(certificateAuthority ? { certificateAuthority } : {}),
      },
      claimMappings: {
        username: { claim: trust.usernameClaim, prefix: trust.usernamePrefix },
        groups: { claim: trust.groupsClaim, prefix: trust.groupsPrefix },
      },
    })),
  });
}

/** Writes the configuration atomically (kube-apiserver never reads half a file). */
export async function writeAuthenticationConfig(
  directory: string,
  issuers: readonly OidcTrust[],
  certificateAuthority?: string,
): Promise<void> {
  const path = authenticationConfigPath(directory);
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, authenticationConfig(issuers, certificateAuthority), { mode: 0o600 });
  await rename(partial, path);
}

/** A cluster started for the first time trusts no issuer; one that has a configuration keeps it. */
export async function ensureAuthenticationConfig(directory: string): Promise<void> {
  try {
    await access(authenticationConfigPath(directory));
  } catch {
    await writeAuthenticationConfig(directory, []);
  }
}
