/** The Cluster kind's I/O half: the backend observes and carries out commands; profile and config changes wake Clusters. */
import type { ClusterObservation } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import { CLUSTER_FINALIZERS } from "../../../api/constants/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../api/constants/hibernation.ts";
import { SETTINGS_FROM_ROLLOUT_ANNOTATION } from "../../../api/constants/rollout.ts";
import { LABELS } from "../../../api/constants.ts";
import { HANDOVER_ANNOTATION } from "../../../api/move.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import type { Rollout } from "../../../api/rollout.ts";
import { acceptedVersion, backendClusterFacts } from "../../../machines/backend-cluster/backend-cluster.ts";
import { CLUSTER_DEFINITION } from "../../../machines/cluster/definition.ts";
import { explainCluster, type ProfileLookup } from "../../../machines/cluster/explain.ts";
import type { HandoverFacts, PoolMemberFacts } from "../../../machines/cluster/machine.ts";
import { unobservedStatus } from "../../../machines/cluster/status.ts";
import {
  type ClusterCommand,
  type ClusterTiming,
  clusterResponsibility,
  clusterTarget,
  stepCluster,
} from "../../../machines/cluster/step.ts";
import { profileName } from "../../../machines/cluster-profile/profile.ts";
import { runName, settingsHash } from "../../../machines/rollout/settings.ts";
import type { KindContext, KindSettings, MachineKind } from "../../machine-kind.ts";
import { wake } from "../../machine-kind.ts";
import { POOL_CACHES } from "../cluster-pool/caches.ts";
import { PoolBinder } from "../cluster-pool/pool-binder.ts";
import { PoolController } from "../cluster-pool/pool-controller.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { ROLLOUTS } from "../rollout/caches.ts";
import { profileClaimant, profileOffer, profilesOf, unpublishedProfile } from "../shared/profile-offer.ts";
import { CLUSTER_CACHES } from "./caches.ts";
import { readClusterConfigs } from "./cluster-configs.ts";
import { handOver, handoverOf, takeOver } from "./handover.ts";
import { withRestoreSource } from "./restore-source.ts";
import { SleepMetrics } from "./sleep-metrics.ts";

/**
 * Defaults: poll a working backend every 2 s, retry a missing profile every 30 s, and look at a Ready Cluster's
 * infrastructure every 2 min (an observation; nothing is written unless it changed), so a lost one shows soon.
 */
export const DEFAULT_CLUSTER_TIMING = { pollMs: 2_000, retryMs: 30_000, resyncMs: 120_000 } as const;

/**
 * The Cluster kind's settings besides its timing: `pools: true` serves new Clusters from warm pools
 * (ClusterPools; their CRD must be installed) and runs the pool controller.
 */
export interface ClusterSettings extends KindSettings {
  readonly pools?: boolean;
}

/** The Cluster kind's per-engine state: the pool binder, when pools are served; hibernation's metrics. */
export interface ClusterKindState {
  readonly pools: PoolBinder | undefined;
  readonly sleep: SleepMetrics;
}

/** One look at a Cluster's world: the backend, the hand-over Secret of a moved Cluster, the warm pools. */
export interface ClusterLook {
  readonly backend: ClusterObservation;
  readonly handover?: HandoverFacts;
  readonly poolMember?: PoolMemberFacts;
  /** A pool serves its ProviderConfig and it may still take a member (for the pool-miss metric). */
  readonly poolCandidate?: true;
}

/** Every Cluster that names one of these profiles. */
function clustersOf(context: KindContext, profiles: ReadonlySet<string | undefined>): string[] {
  return context.informers
    .of(CLUSTER_CACHES.clusters)
    .list()
    .filter((cluster) => profiles.has(cluster.spec.profile))
    .map((cluster) => `${cluster.metadata.namespace}/${cluster.metadata.name}`);
}

/** The Cluster kind: Pending → Provisioning → Ready ⇄ Updating, Failed, Deleting, at the configured backend. */
export const clusterKind: MachineKind<
  Cluster,
  ClusterLook,
  ClusterCommand,
  ClusterTiming,
  ClusterKindState,
  ClusterSettings
> = {
  definition: CLUSTER_DEFINITION,
  cache: CLUSTER_CACHES.clusters,
  timing: DEFAULT_CLUSTER_TIMING,
  state: (context, settings) => {
    const sleep = new SleepMetrics();
    if (settings.pools !== true) return { pools: undefined, sleep };
    context.informers.of(POOL_CACHES.pools); // made before the caches start
    return { pools: new PoolBinder(context as KindContext), sleep };
  },
  controllers(context, _settings, parts) {
    context.state.sleep.register(parts.metrics.registry, () =>
      context.informers
        .of(CLUSTER_CACHES.clusters)
        .list()
        .filter((cluster) => cluster.metadata.labels?.[LABELS.provider] === context.providerName),
    );
    const binder = context.state.pools;
    if (!binder) return [];
    binder.countInto(parts.metrics);
    return [
      new PoolController(context as KindContext, { pollMs: context.timing.pollMs, resyncMs: 30_000 }, parts),
    ];
  },
  wakes: [
    wake(PROFILE_CACHES.profiles, (profile: ClusterProfile, context) =>
      clustersOf(context, new Set([profile.metadata.name])),
    ),
    // A config's settings and defaultVersion change what its Clusters are built with; a profile name it
    // claims makes Clusters naming that (still missing) profile ours to report on.
    wake(PROFILE_CACHES.providerConfigs, (config: ProviderConfig, context) =>
      clustersOf(context, new Set([...profilesOf(context, config), profileName(context, config)])),
    ),
    // A settings Rollout deleted gives the Clusters it reached their config's settings again: they look at once.
    // (While it exists, its changes change nothing of theirs: its patch is fixed, and its end gives the config it.)
    wake(ROLLOUTS, (rollout: Rollout, context) => {
      const gone = !context.informers
        .of(ROLLOUTS)
        .list()
        .some((known) => known.metadata.uid === rollout.metadata.uid);
      if (!rollout.spec.settings || (!gone && !rollout.metadata.deletionTimestamp)) return [];
      return context.informers
        .of(CLUSTER_CACHES.clusters)
        .list()
        .filter(
          (cluster) =>
            cluster.metadata.namespace === rollout.metadata.namespace &&
            cluster.metadata.annotations?.[SETTINGS_FROM_ROLLOUT_ANNOTATION] === runName(rollout),
        )
        .map((cluster) => `${cluster.metadata.namespace}/${cluster.metadata.name}`);
    }),
  ],

  // Decides and reads; never writes. A moved Cluster's take-over and a pool claim are the machine's states and
  // commands (takingOver, claimingPoolMember), carried out by `run` through the controller's writer.
  async open(cluster, context) {
    const { backend, providerName, timing, log } = context;
    const { profile, settings, defaultVersion } = profileOffer(context, cluster.spec.profile, cluster);
    const responsibility = clusterResponsibility(cluster, profile, profileClaimant(context));
    if (responsibility === "ignored" || responsibility === "foreign") return undefined;
    const described = clusterTarget(cluster, profile, settings);
    const clusterConfigs =
      // Only a Cluster that names ClusterConfigs needs its backend's ClusterConfig kind.
      responsibility === "ours" && (cluster.spec.clusterConfigs ?? []).length > 0
        ? await readClusterConfigs(context.kubeConfig, await context.backends.of(described), cluster)
        : undefined;
    const target = { ...described, ...(clusterConfigs ? { clusterConfigs } : {}) };
    // Only a Cluster asked to sleep needs to know whether its backend can (contract 1.6).
    const hibernationOffered =
      responsibility === "ours" && cluster.metadata.annotations?.[HIBERNATE_ANNOTATION] !== undefined
        ? typeof (await context.backends.of(described)).hibernate === "function"
        : false;
    const binder = responsibility === "ours" ? context.state.pools : undefined;
    const version = acceptedVersion(
      backendClusterFacts(cluster, CLUSTER_FINALIZERS.cluster, profile, defaultVersion, { exists: false }),
    );
    // A missing profile its ProviderConfig cannot publish: the Cluster names that config and its problem.
    const unpublished = profile ? undefined : unpublishedProfile(context, cluster.spec.profile);
    return {
      async observe(object): Promise<ClusterLook> {
        if (responsibility !== "ours") return { backend: { exists: false } };
        const handover = await handoverOf(object, context.kubeConfig);
        // Until its state is imported, the backend cannot answer for a moved Cluster: it is not asked.
        if (handover && handover.state !== "gone") return { backend: { exists: false }, handover };
        const observation = await backend.observe(target);
        const pool = binder ? await binder.offer(object, target, version, observation) : undefined;
        return {
          backend: observation,
          ...(handover ? { handover } : {}),
          ...(pool?.member ? { poolMember: pool.member } : {}),
          ...(pool?.candidate ? { poolCandidate: true } : {}),
        };
      },
      step: (object, look, { now, nowMs, lastError }) => {
        const result = stepCluster({
          cluster: object,
          profile,
          providerName,
          observation: look.backend,
          ...(defaultVersion ? { defaultVersion } : {}),
          ...(lastError === undefined ? {} : { lastError }),
          ...(look.handover ? { handover: look.handover } : {}),
          ...(look.poolMember ? { poolMember: look.poolMember } : {}),
          ...(unpublished ? { unpublished } : {}),
          ...(hibernationOffered ? { hibernationOffered } : {}),
          settingsHash: settingsHash(settings),
          now,
          timing,
        });
        const desired = { ...object, metadata: result.desired.metadata };
        binder?.readied(desired, result.previousState, result.state, nowMs);
        context.state.sleep.stepped(object.metadata.uid ?? "", result.previousState, result.state, nowMs);
        // A Cluster a pool could have served goes to be made as usual: a miss.
        if (
          look.poolCandidate &&
          ["pending", "claimingPoolMember"].includes(result.previousState) &&
          result.state === "provisioning" &&
          !look.backend.exists
        )
          binder?.missed(target);
        return result;
      },
      unobserved: (object, failure, { now }) => unobservedStatus(object, failure, now),
      async run(commands, object, writer) {
        for (const command of commands) {
          log.info("backend command", {
            command: command.kind,
            cluster: `${target.namespace}/${target.name}`,
            ...("version" in command ? { version: command.version } : {}),
            ...("member" in command ? { pool: command.pool, member: command.member } : {}),
          });
          if (command.kind === "takeOver") await takeOver(object, target, command.secret, context, writer);
          else if (command.kind === "claimPoolMember")
            await binder?.claim(command.pool, command.member, target, writer);
          else if (command.kind === "hibernate" || command.kind === "wake") {
            const call = backend[command.kind]?.bind(backend);
            if (!call) throw new Error(`the backend cannot ${command.kind} clusters`);
            await call(target);
          } else if (command.kind === "create") {
            // A clone (contract 1.7): made from the snapshot its annotation names, by the Cluster's own backend.
            const source = await withRestoreSource(
              object,
              target,
              await context.backends.of(target),
              context.kubeConfig,
            );
            await backend.create(source, command.version);
          } else if (command.kind === "update") await backend.update(target, command.version);
          else await backend.delete(target);
        }
      },
    };
  },

  // Paused for a move: hand the backend's state over. Nothing to hand over for a Cluster being deleted, nor for
  // a copy that arrived here and has not taken its own hand-over yet (this backend holds nothing of it).
  async paused(cluster, context) {
    if (cluster.metadata.deletionTimestamp || cluster.metadata.annotations?.[HANDOVER_ANNOTATION]) return;
    const { profile, settings } = profileOffer(context, cluster.spec.profile, cluster);
    await handOver(cluster, clusterTarget(cluster, profile, settings), context);
  },

  describe: (command) => command.kind,

  async explain(cluster, read) {
    const found = await read(PROFILE_CACHES.profiles.resource, undefined, cluster.spec.profile);
    const profile: ProfileLookup =
      found === "unknown"
        ? { found: "unknown" }
        : found === undefined
          ? { found: false }
          : { found: true, profile: found as ClusterProfile };
    return explainCluster(cluster, profile);
  },
};
