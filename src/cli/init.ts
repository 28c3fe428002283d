/** `openmcp-engine init`: what the openMCP operator runs before `run` — CRDs and ClusterProfiles, then exit 0. */
import { resolve } from "node:path";
import { PROVIDER_CONFIG_ANNOTATIONS } from "../api/constants/provider-config.ts";
import { CRD_CLUSTER_LABEL } from "../api/constants.ts";
import { DEFAULT_CONFIG_ENV } from "../machines/cluster-profile/default-config.ts";
import { loadKubeConfig } from "../runtime/api-server/load-kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { initManagementCluster } from "../runtime/start/init.ts";
import { packageFile } from "./from-checkout.ts";
import { engineFlags, parseEngineArgs } from "./run.ts";

export const initUsage = `Usage: openmcp-engine init --provider-name <name> [flags]

Installs or updates the engine's CRDs (labelled ${CRD_CLUSTER_LABEL.key}: ${CRD_CLUSTER_LABEL.platform}) and makes
the ClusterProfiles of all ProviderConfigs, then exits 0. Safe to run any number of times.

When no ProviderConfig is this provider's (nor free for it to claim), it first makes a default one,
once: named after the provider, claimed by it, publishing the ClusterProfile named after the provider
(as openMCP's kind provider publishes 'kind'), annotated ${PROVIDER_CONFIG_ANNOTATIONS.madeBy}: init; edit or
delete it like any other (a later init makes it again if none of this provider's is left). Its backend:
--backend if built-in, else $${DEFAULT_CONFIG_ENV.backend}, else the provider name if it names kind,
local or simulated; without one, none is made. Environment:
  ${DEFAULT_CONFIG_ENV.profile}=<name>     the profile's name instead of the provider name
  ${DEFAULT_CONFIG_ENV.backend}=<backend>  its backend when --backend names no built-in one
  ${DEFAULT_CONFIG_ENV.enabled}=false        make none

Flags: --crds <folder> (default: the crds/ folder of this project), and the flags of 'run'
(--provider-name, --environment, --kubeconfig, --backend, --backend-option, --state-dir, --verbosity).`;

/** Runs `init`; resolves when everything is in place. */
export async function init(args: string[]): Promise<void> {
  const values = parseEngineArgs(args, initUsage, { crds: { type: "string" } });
  const flags = engineFlags(values, initUsage, { leaderElect: false });
  const crds = resolve(typeof values.crds === "string" ? values.crds : packageFile("crds"));
  const log = createLogger({ level: flags.logLevel });
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  log.info("init", { kubeconfig: source, crds });
  await initManagementCluster(flags, kubeConfig, crds, log);
}
