/** A kind cluster's OIDC trust: the authentication configuration its kube-apiserver reads and reloads. */
import type { ClusterTarget } from "../../api/backend.ts";
import type { OidcTrust } from "../../api/backend-contract.ts";
import { authenticationConfig, writeAuthenticationConfig } from "../shared/authentication-config.ts";
import { describeCluster } from "../shared/error-wording.ts";
import type { AuthnVolumes } from "./authn-volume.ts";
import type { KindRecord } from "./state-folder.ts";

/**
 * Writes the cluster's authentication configuration (one JWT authenticator per issuer) where its kube-apiserver
 * reads it: its volume, or its `authn/` folder here (`where.folder`, clusters made before volumes). A private CA
 * for the issuers comes from the ProviderConfig's `settings.oidcCertificateAuthority` (PEM), as on the `local`
 * backend.
 */
export async function trustIssuers(
  target: ClusterTarget,
  cluster: string,
  record: KindRecord | undefined,
  issuers: readonly OidcTrust[],
  where: { readonly folder: string; readonly volumes: AuthnVolumes | undefined },
): Promise<void> {
  if (!record) throw new Error(`kind backend: ${describeCluster(target)} does not exist`);
  if (!record.oidc) {
    throw new Error(
      `kind backend: ${describeCluster(target)} (kind cluster ${cluster}) was created before this backend set up OIDC trust; delete the Cluster and create it again to use OIDC access`,
    );
  }
  const ca =
    typeof target.settings?.oidcCertificateAuthority === "string"
      ? target.settings.oidcCertificateAuthority
      : undefined;
  if (record.authn !== "volume") {
    await writeAuthenticationConfig(where.folder, issuers, ca);
    return;
  }
  if (!where.volumes)
    throw new Error(
      `kind backend: ${describeCluster(target)} (kind cluster ${cluster}) keeps its OIDC trust in a Docker volume, and this backend runs without the Docker CLI (backend option docker)`,
    );
  await where.volumes.write(cluster, authenticationConfig(issuers, ca));
}
