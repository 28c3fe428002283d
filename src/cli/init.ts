/** `openmcp-engine init`: what the openMCP operator runs before `run` — CRDs and ClusterProfiles, then exit 0. */
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { ANNOTATIONS, CRD_CLUSTER_LABEL, LABELS, RESOURCES } from "../api/constants.ts";
import { isConflict } from "../api/error-message.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import type { ProfileOwner } from "../machines/cluster-profile/profile.ts";
import { BUILT_IN_BACKENDS } from "../providers/registry.ts";
import { Backends } from "../runtime/backends.ts";
import { InformerSet } from "../runtime/informers.ts";
import { installCrds } from "../runtime/install-crds.ts";
import { CACHES } from "../runtime/kinds/caches.ts";
import { loadKubeConfig } from "../runtime/load-kubeconfig.ts";
import { createLogger, type Logger } from "../runtime/logger.ts";
import { ProfileController } from "../runtime/profile-controller.ts";
import { backendFromSettings } from "../runtime/start/engine-from-settings.ts";
import { throttledFor } from "../runtime/throttling.ts";
import { DEFAULT_CONFIG_ENV, defaultProviderConfig } from "./default-config.ts";
import { packageFile } from "./from-checkout.ts";
import { engineFlags, parseEngineArgs } from "./run.ts";

export const initUsage = `Usage: openmcp-engine init --provider-name <name> [flags]

Installs or updates the engine's CRDs (labelled ${CRD_CLUSTER_LABEL.key}: ${CRD_CLUSTER_LABEL.platform}) and makes
the ClusterProfiles of all ProviderConfigs, then exits 0. Safe to run any number of times.

When no ProviderConfig is this provider's (nor free for it to claim), it first makes a default one,
once: named after the provider, claimed by it, publishing the ClusterProfile named after the provider
(as openMCP's kind provider publishes 'kind'), annotated ${ANNOTATIONS.madeBy}: init; edit or
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
  const owner = {
    providerName: flags.providerName,
    environment: flags.environment,
    backends: backends.names,
  };
  const profiles = new ProfileController({ kubeConfig, informers, owner, backends, log });
  try {
    // Before the caches start, so that they hold it and the loop below reconciles it.
    await retryingTransient(() => makeDefaultConfig(kubeConfig, owner, flags.backend, log));
    await informers.start();
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
    for (const name of configNames) await retryingTransient(() => profiles.reconcile(name));
    log.info("ClusterProfiles in place", { providerConfigs: [...configNames] });
  } finally {
    informers.stop();
    await backends.close();
  }
}

/**
 * Creates the default ProviderConfig when one is wanted (see default-config.ts), and says why not otherwise.
 * Created once: one that exists (AlreadyExists, e.g. made by a parallel init) is left as it is.
 */
async function makeDefaultConfig(
  kubeConfig: KubeConfig,
  owner: ProfileOwner,
  backendFlag: string | undefined,
  log: Logger,
): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const listed = (await api.listClusterCustomObject({ ...RESOURCES.ProviderConfig })) as {
    items: ProviderConfig[];
  };
  const decision = defaultProviderConfig({
    owner,
    backendFlag,
    builtIns: BUILT_IN_BACKENDS,
    configs: listed.items,
    env: process.env,
  });
  if ("skip" in decision) {
    log.info("no default ProviderConfig made", { why: decision.skip });
    return;
  }
  const { make } = decision;
  const fields = {
    config: make.metadata.name,
    backend: make.spec.backend,
    profile: make.spec.profileName,
  };
  try {
    await api.createClusterCustomObject({ ...RESOURCES.ProviderConfig, body: make });
    log.info("default ProviderConfig made: no ProviderConfig of this provider existed", fields);
  } catch (error) {
    if (!isConflict(error)) throw error;
    log.info("default ProviderConfig not made: a ProviderConfig of its name exists", fields);
  }
}

/**
 * Runs `attempt`, again while it meets a conflict (after a second: e.g. a profile created a moment ago, by this
 * init for another config, that the cache does not hold yet) or a 429 (after the time the API server asks:
 * e.g. "storage is (re)initializing" right after the CRDs were installed); at most ten times.
 */
async function retryingTransient<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const waitMs = throttledFor(error) ?? (isConflict(error) ? 1_000 : undefined);
      if (waitMs === undefined || tries >= 10) throw error;
      await sleep(waitMs);
    }
  }
}
