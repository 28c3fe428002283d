/** The kubeconfigs handed out for granted AccessRequests, and when a token in one is due for renewal. Pure. */
import { stringify } from "yaml";
import type { AccessRequest, OidcAccess } from "../../api/access-request.ts";

/** Where the target cluster is and how to trust it. */
export interface KubeconfigClusterProps {
  /** API server URL, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** The cluster's CA bundle, base64-encoded PEM (as in a kubeconfig's `certificate-authority-data`). */
  readonly certificateAuthorityData: string;
  /** Name of the cluster (and of the context) in the kubeconfig. */
  readonly clusterName: string;
  /** The context's default namespace: set when the grant is limited to one namespace (see grantNamespace). */
  readonly namespace?: string;
}

/** Input of {@link tokenKubeconfig}. */
export interface TokenKubeconfigProps extends KubeconfigClusterProps {
  /** The bearer token (a ServiceAccount token). */
  readonly token: string;
  /** Name of the user in the kubeconfig. */
  readonly userName: string;
}

/** Input of {@link oidcKubeconfig}. */
export interface OidcKubeconfigProps extends KubeconfigClusterProps {
  /** The OIDC access of the request: issuer, client ID, extra scopes; its `name` names the user. */
  readonly oidc: OidcAccess;
}

/** `apiVersion` of the credential exchange between kubectl and an exec plugin. */
export const EXEC_CREDENTIAL_API_VERSION = "client.authentication.k8s.io/v1beta1";

/**
 * A kubeconfig (YAML) with one cluster, one user authenticating with `token`, and a context joining them that is
 * the current one. The context is named like the cluster.
 *
 * Caveats: the result holds a credential; it belongs in a Secret, never in a log or status.
 */
export function tokenKubeconfig(input: TokenKubeconfigProps): string {
  return kubeconfig(input, input.userName, { token: input.token });
}

/**
 * A kubeconfig (YAML) for OIDC access: the user runs the kubectl `oidc-login` plugin
 * (github.com/int128/kubelogin), which logs in at the issuer and hands kubectl an ID token:
 * `kubectl oidc-login get-token --oidc-issuer-url=<issuer> --oidc-client-id=<clientID>` plus
 * `--oidc-extra-scope=<scope>` for each extra scope, with `interactiveMode: IfAvailable` so a browser login
 * can happen when kubectl runs in a terminal.
 *
 * Guarantees: holds no credential at all (no token, no client secret, no admin certificate) — each user brings
 * their own identity; the user is named after the OIDC provider.
 */
export function oidcKubeconfig(input: OidcKubeconfigProps): string {
  const { oidc } = input;
  const args = [
    "oidc-login",
    "get-token",
    `--oidc-issuer-url=${oidc.issuer}`,
    `--oidc-client-id=${oidc.clientID}`,
    ...(oidc.extraScopes ?? []).map((scope) => `--oidc-extra-scope=${scope}`),
  ];
  return kubeconfig(input, oidc.name, {
    exec: {
      apiVersion: EXEC_CREDENTIAL_API_VERSION,
      command: "kubectl",
      args,
      interactiveMode: "IfAvailable",
    },
  });
}

/**
 * The one namespace a grant is limited to, as its kubeconfig's default namespace: that of an admin scope of one
 * namespace (a tenant of a shared host, contract 1.2), else the one namespace every role the request creates or
 * binds lives in. Undefined when it grants anything cluster-wide, or in several namespaces.
 */
export function grantNamespace(
  request: AccessRequest,
  scope?: { readonly namespaces: readonly string[] },
): string | undefined {
  if (scope?.namespaces.length === 1) return scope.namespaces[0];
  const { token, oidc } = request.spec;
  const placed = [
    ...(token?.permissions ?? []).map((permission) => permission.namespace),
    ...(token?.roleRefs ?? []).map((ref) => (ref.kind === "Role" ? ref.namespace : undefined)),
    ...(oidc?.roleBindings ?? []).flatMap((binding) =>
      binding.roleRefs.map((ref) => (ref.kind === "Role" ? ref.namespace : undefined)),
    ),
  ];
  if (placed.length === 0 || placed.some((namespace) => !namespace)) return undefined;
  const namespaces = new Set(placed);
  return namespaces.size === 1 ? placed[0] : undefined;
}

/**
 * Whether a token valid from `createdSeconds` to `expiresSeconds` (Unix seconds) should be renewed at `nowMs`
 * (Unix milliseconds): true once `fraction` (default 0.8) of its validity has passed.
 *
 * Guarantees: monotonic in `nowMs` (once due, due at every later time); a token that never expires
 * (`expiresSeconds` is `Infinity`) is never due; a validity of zero or less, or a `NaN` timestamp, is due at once
 * (a token we cannot reason about is renewed rather than trusted).
 */
export function renewalDue(
  createdSeconds: number,
  expiresSeconds: number,
  nowMs: number,
  fraction = 0.8,
): boolean {
  if (Number.isNaN(createdSeconds) || Number.isNaN(expiresSeconds) || expiresSeconds <= createdSeconds) {
    return true;
  }
  return nowMs >= renewalTime(createdSeconds, expiresSeconds, fraction);
}

/** When (Unix milliseconds) a token valid from `createdSeconds` to `expiresSeconds` falls due for renewal. */
export function renewalTime(createdSeconds: number, expiresSeconds: number, fraction = 0.8): number {
  return (createdSeconds + fraction * (expiresSeconds - createdSeconds)) * 1_000;
}

/** A JSON object as YAML will write it. */
type YamlObject = { readonly [key: string]: string | readonly string[] | YamlObject };

function kubeconfig(cluster: KubeconfigClusterProps, userName: string, user: YamlObject): string {
  const name = cluster.clusterName;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name,
        cluster: { server: cluster.server, "certificate-authority-data": cluster.certificateAuthorityData },
      },
    ],
    users: [{ name: userName, user }],
    contexts: [
      {
        name,
        context: {
          cluster: name,
          user: userName,
          ...(cluster.namespace ? { namespace: cluster.namespace } : {}),
        },
      },
    ],
    "current-context": name,
  });
}
