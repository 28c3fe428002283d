/** The informers the engine shares between its controllers: one watch per kind, however many readers. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../api/cluster.ts";
import type { ClusterProfile } from "../api/cluster-profile.ts";
import { RESOURCES } from "../api/constants.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import type { Clock } from "./clock.ts";
import { Informer } from "./informer.ts";
import { errorMessage, type Logger } from "./logger.ts";

/** One informer per kind the engine reads. */
export interface EngineInformers {
  readonly clusters: Informer<Cluster>;
  readonly profiles: Informer<ClusterProfile>;
  readonly providerConfigs: Informer<ProviderConfig>;
}

/** Creates (but does not start) the informers. */
export function createInformers(kubeConfig: KubeConfig, log: Logger, clock?: Clock): EngineInformers {
  const make = <T extends Cluster | ClusterProfile | ProviderConfig>(kind: keyof typeof RESOURCES) =>
    new Informer<T>({
      kubeConfig,
      resource: RESOURCES[kind],
      kind,
      ...(clock ? { clock } : {}),
      onError: (error) => log.warn("watch interrupted; recovering", { kind, error: errorMessage(error) }),
    });
  return {
    clusters: make<Cluster>("Cluster"),
    profiles: make<ClusterProfile>("ClusterProfile"),
    providerConfigs: make<ProviderConfig>("ProviderConfig"),
  };
}

/** Starts every informer; resolves when all caches hold a complete list. */
export async function startInformers(informers: EngineInformers): Promise<void> {
  await Promise.all(Object.values(informers).map((informer: Informer<never>) => informer.start()));
}

/** Stops every informer. */
export function stopInformers(informers: EngineInformers): void {
  for (const informer of Object.values(informers) as Informer<never>[]) informer.stop();
}
