/** A ServiceAccount made on an API server, and a token of it: a credential that authenticates and is authorized by RBAC only. */
import type { CoreV1Api } from "@kubernetes/client-node";

/** Makes ServiceAccount `namespace/name` and returns a token of it valid for `expirationSeconds`. */
export async function serviceAccountToken(
  core: CoreV1Api,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  return request.status?.token ?? "";
}
