/**
 * A kubeconfig kept in a Secret of the management cluster, as a ProviderConfig names it in
 * `settings.kubeconfigSecretRef`: an existing cluster's, a garden's, a Cluster API management cluster's.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type { SecretReader } from "../../api/backend-contract.ts";
import type { JsonObject } from "../../api/common.ts";

/** Where a kubeconfig is: `settings.kubeconfigSecretRef` of a ProviderConfig. */
export interface KubeconfigSecretRef {
  readonly namespace: string;
  readonly name: string;
  /** Key in the Secret's data; default `kubeconfig`. */
  readonly key: string;
}

/** The kubeconfig read from the Secret, parsed. */
export interface KubeconfigAccess {
  readonly text: string;
  readonly kubeConfig: KubeConfig;
  readonly server: string;
}

/**
 * Reads `settings.kubeconfigSecretRef` (`{ namespace, name, key? }`); throws a message naming the
 * ProviderConfig and what to write when it is missing or malformed.
 */
export function kubeconfigSecretRef(
  settings: JsonObject | undefined,
  providerConfig: string,
): KubeconfigSecretRef {
  const example = `settings: { kubeconfigSecretRef: { namespace: <ns>, name: <secret>, key: kubeconfig } }`;
  const ref = settings?.kubeconfigSecretRef;
  if (ref === undefined)
    throw new Error(`ProviderConfig ${providerConfig} has no settings.kubeconfigSecretRef; set ${example}`);
  if (typeof ref !== "object" || ref === null || Array.isArray(ref))
    throw new Error(
      `ProviderConfig ${providerConfig}: settings.kubeconfigSecretRef must be an object: ${example}`,
    );
  const { namespace, name, key } = ref as JsonObject;
  const field = (value: unknown, what: string) => {
    if (typeof value !== "string" || value.trim() === "")
      throw new Error(
        `ProviderConfig ${providerConfig}: settings.kubeconfigSecretRef.${what} must be a non-empty string: ${example}`,
      );
    return value;
  };
  return {
    namespace: field(namespace, "namespace"),
    name: field(name, "name"),
    key: key === undefined ? "kubeconfig" : field(key, "key"),
  };
}

/**
 * Reads and parses the kubeconfig `ref` names; errors name the Secret and the ProviderConfig and never quote the
 * Secret's content.
 */
export async function readKubeconfigSecret(
  readSecret: SecretReader,
  ref: KubeconfigSecretRef,
  providerConfig: string,
): Promise<KubeconfigAccess> {
  const secret = `Secret ${ref.namespace}/${ref.name}`;
  let text: string | undefined;
  try {
    text = await readSecret(ref.namespace, ref.name, ref.key);
  } catch (error) {
    const reason = String((error as Error)?.message ?? error).split("\n")[0];
    throw new Error(
      `cannot read ${secret} (kubeconfigSecretRef of ProviderConfig ${providerConfig}): ${reason}`,
    );
  }
  if (text === undefined || text.trim() === "") {
    throw new Error(
      `${secret} or its key "${ref.key}" does not exist (kubeconfigSecretRef of ProviderConfig ${providerConfig}); create it with the existing cluster's kubeconfig`,
    );
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
  } catch {
    // The parser's message quotes the offending text, which may be key material: never pass it on.
    throw new Error(`key "${ref.key}" of ${secret} is not a kubeconfig (YAML that does not parse)`);
  }
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) {
    throw new Error(
      `the kubeconfig in key "${ref.key}" of ${secret} has no current-context naming a cluster with a server`,
    );
  }
  return { text, kubeConfig, server };
}
