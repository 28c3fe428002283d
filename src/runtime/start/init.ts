/**
 * What the openMCP operator has a provider do before `run` (`openmcp-engine init`): the engine's CRDs installed
 * or updated, a default ProviderConfig where none is this provider's, and the ClusterProfiles of all
 * ProviderConfigs in place. Safe to run any number of times.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { PROVIDER_CONFIG_LABELS } from "../../api/constants/provider-config.ts";
import { CRD_CLUSTER_LABEL, LABELS, RESOURCES } from "../../api/constants.ts";
import { isConflict } from "../../api/error-message.ts";
import type { Logger } from "../../api/logger.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import { defaultProviderConfig } from "../../machines/cluster-profile/default-config.ts";
import type { ProfileOwner } from "../../machines/cluster-profile/profile.ts";
import { BUILT_IN_BACKENDS } from "../../providers/registry.ts";
import { installCrds } from "../api-server/install-crds.ts";
import { throttledFor } from "../api-server/throttling.ts";
import { Backends } from "../backends.ts";
import { InformerSet } from "../informers.ts";
import { CACHES } from "../kinds/caches.ts";
import { ProfileController } from "../kinds/provider-config/profile-controller.ts";
import { backendFromSettings } from "./engine-from-settings.ts";
import type { EngineSettings } from "./engine-settings.ts";

/** The settings init reads: whose profiles, which backends (`--backend` as given: a name, path or package). */
export type InitSettings = Pick<
  EngineSettings,
  "providerName" | "environment" | "backendOptions" | "stateDirectory"
> & { readonly backend: string | undefined };

/** Installs the CRDs of folder `crds` and puts the ClusterProfiles in place; resolves when all is there. */
export async function initManagementCluster(
  settings: InitSettings,
  kubeConfig: KubeConfig,
  crds: string,
  log: Logger,
): Promise<void> {
  const names = await installCrds(kubeConfig, {
    directory: crds,
    labels: { [CRD_CLUSTER_LABEL.key]: CRD_CLUSTER_LABEL.platform },
  });
  log.info("CRDs installed", { crds: names });

  const informers = new InformerSet(kubeConfig, log);
  const configs = informers.of(CACHES.providerConfigs);
  const backends = new Backends(await backendFromSettings(settings, kubeConfig, log), (name) =>
    configs.get(name),
  );
  const owner = {
    providerName: settings.providerName,
    environment: settings.environment,
    backends: backends.names,
  };
  const profiles = new ProfileController({ kubeConfig, informers, owner, backends, log });
  try {
    // Before the caches start, so that they hold it and the loop below reconciles it.
    await retryingTransient(() => makeDefaultConfig(kubeConfig, owner, settings.backend, log));
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
      const config = labels[PROVIDER_CONFIG_LABELS.providerConfig];
      if (config && labels[LABELS.provider] === settings.providerName) configNames.add(config);
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
