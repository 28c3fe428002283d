/** The informers the engine shares between its controllers: one watch per kind, however many readers. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { AccessRequest } from "../api/access-request.ts";
import type { Cluster } from "../api/cluster.ts";
import type { ClusterProfile } from "../api/cluster-profile.ts";
import { LABELS, RESOURCES } from "../api/constants.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import type { Clock } from "./clock.ts";
import { Informer, secretSource } from "./informer.ts";
import { errorMessage, type Logger } from "./logger.ts";

/** One informer per kind the engine reads. */
export interface EngineInformers {
  readonly clusters: Informer<Cluster>;
  readonly profiles: Informer<ClusterProfile>;
  readonly providerConfigs: Informer<ProviderConfig>;
  readonly accessRequests: Informer<AccessRequest>;
  /** Only the Secrets the engine made (labelled with their AccessRequest's uid). */
  readonly accessSecrets: Informer<AccessSecret>;
}

/** The parts of a Secret the engine reads (data values are base64, as on the wire). */
export interface AccessSecret {
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly data?: Readonly<Record<string, string>>;
}

/** Creates (but does not start) the informers. */
export function createInformers(kubeConfig: KubeConfig, log: Logger, clock?: Clock): EngineInformers {
  const onError = (kind: string) => (error: unknown) =>
    log.warn("watch interrupted; recovering", { kind, error: errorMessage(error) });
  const make = <T extends Cluster | ClusterProfile | ProviderConfig | AccessRequest>(
    kind: keyof typeof RESOURCES,
  ) =>
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
    accessRequests: make<AccessRequest>("AccessRequest"),
    accessSecrets: new Informer<AccessSecret>({
      kubeConfig,
      resource: { group: "", version: "v1", plural: "secrets" },
      kind: "Secret",
      labelSelector: LABELS.accessRequestUid,
      source: secretSource(kubeConfig),
      ...(clock ? { clock } : {}),
      onError: onError("Secret"),
    }),
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
