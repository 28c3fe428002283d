/** Reads keys of Secrets in the management cluster on behalf of backends, which never talk to the API server. */
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { SecretReader } from "../../api/backend-contract.ts";
import { absentIfNotFound } from "../../api/error-message.ts";

/** A {@link SecretReader} over the API server; undefined for a missing Secret or key. */
export function apiSecretReader(kubeConfig: KubeConfig): SecretReader {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return async (namespace, name, key) => {
    const secret = await absentIfNotFound(() => core.readNamespacedSecret({ namespace, name }));
    const value = secret?.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
}
