/** `openmcp-engine init`: what the openMCP operator runs before `run` — CRDs and ClusterProfiles, then exit 0. */
import { join, resolve } from "node:path";
import { CRD_CLUSTER_LABEL, LABELS } from "../api/constants.ts";
import { Backends } from "../runtime/backends.ts";
import { InformerSet } from "../runtime/informers.ts";
import { installCrds } from "../runtime/install-crds.ts";
import { CACHES } from "../runtime/kinds/caches.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger } from "../runtime/logger.ts";
import { ProfileController } from "../runtime/profile-controller.ts";
import { engineFlags, parseEngineArgs } from "./run.ts";
import { backendFromSettings } from "./start-engine.ts";

const repositoryRoot = join(import.meta.dirname, "..", "..");

export const initUsage = `Usage: openmcp-engine init --provider-name <name> [flags]

Installs or updates the engine's CRDs (labelled ${CRD_CLUSTER_LABEL.key}: ${CRD_CLUSTER_LABEL.platform}) and makes
the ClusterProfiles of all ProviderConfigs, then exits 0. Safe to run any number of times.

Flags: --crds <folder> (default: the crds/ folder of this project), and the flags of 'run'
(--provider-name, --environment, --kubeconfig, --backend, --backend-option, --state-dir, --verbosity).`;

/** Runs `init`; resolves when everything is in place. */
export async function init(args: string[]): Promise<void> {
  const values = parseEngineArgs(args, initUsage, { crds: { type: "string" } });
  const flags = engineFlags(values, initUsage, { leaderElect: false });
  const crds = resolve(typeof values.crds === "string" ? values.crds : join(repositoryRoot, "crds"));
  const log = createLogger({ level: flags.logLevel });
  const { kubeConfig, source } = loadKubeConfig(flags.kubeconfig);
  log.info("init", { kubeconfig: source, crds });

  const names = await installCrds(kubeConfig, {
    directory: crds,
    labels: { [CRD_CLUSTER_LABEL.key]: CRD_CLUSTER_LABEL.platform },
  });
  log.info("CRDs installed", { crds: names });

  const informers = new InformerSet(kubeConfig, log);
  const configs = informers.of(CACHES.providerConfigs);
  const backends = new Backends(await backendFromSettings(flags, kubeConfig, log), (name) =>
    configs.get(name),
  );
  const profiles = new ProfileController({
    kubeConfig,
    informers,
    owner: { providerName: flags.providerName, environment: flags.environment, backends: backends.names },
    backends,
    log,
  });
  await informers.start();
  try {
    // Every config, and every config some profile of ours still names (so stale profiles go too).
    const configNames = new Set(
      informers
        .of(CACHES.providerConfigs)
        .list()
        .map((config) => config.metadata.name ?? ""),
    );
    for (const profile of informers.of(CACHES.profiles).list()) {
      const labels = profile.metadata.labels ?? {};
      const config = labels[LABELS.providerConfig];
      if (config && labels[LABELS.provider] === flags.providerName) configNames.add(config);
    }
    for (const name of configNames) await profiles.reconcile(name);
    log.info("ClusterProfiles in place", { providerConfigs: [...configNames] });
  } finally {
    informers.stop();
    await backends.close();
  }
}
