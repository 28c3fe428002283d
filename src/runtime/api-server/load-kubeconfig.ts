/** Finds the API server to talk to: --kubeconfig, else $KUBECONFIG, else in-cluster, else ~/.kube/config. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

/** Where the configuration came from, for the start-up log. */
export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  readonly source: string;
}

/** Loads the client configuration in the usual order; throws a message that says what to do when none is found. */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): LoadedKubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) {
    if (!existsSync(path)) throw new Error(`--kubeconfig ${path} does not exist`);
    kubeConfig.loadFromFile(path);
    return { kubeConfig, source: path };
  }
  if (env.KUBECONFIG) {
    kubeConfig.loadFromDefault(); // honours the KUBECONFIG list semantics
    return { kubeConfig, source: `$KUBECONFIG (${env.KUBECONFIG})` };
  }
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    kubeConfig.loadFromCluster();
    return { kubeConfig, source: "in-cluster service account" };
  }
  const fallback = join(homedir(), ".kube", "config");
  if (existsSync(fallback)) {
    kubeConfig.loadFromFile(fallback);
    return { kubeConfig, source: fallback };
  }
  throw new Error(
    "no Kubernetes configuration found: pass --kubeconfig, set KUBECONFIG, or run in a cluster",
  );
}
