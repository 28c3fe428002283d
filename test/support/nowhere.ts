/** A KubeConfig for tests that must never reach an API server. */
import { KubeConfig } from "@kubernetes/client-node";

/** A KubeConfig for a server nobody listens on: a test using it must need no answer. */
export function nowhereKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromClusterAndUser(
    { name: "nowhere", server: "https://127.0.0.1:1", skipTLSVerify: false },
    { name: "nobody" },
  );
  return kubeConfig;
}
