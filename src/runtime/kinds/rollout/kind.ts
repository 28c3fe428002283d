/**
 * The Rollout kind: brings a Kubernetes version, a ProviderConfig's new settings, or both, to a frozen set of
 * Clusters stage by stage, canary first, within
 * maxUnavailable and behind its gates and preflight checks; halts at the first target that fails. The decisions are
 * the pure step's (src/machines/rollout); this reads the Clusters, the profiles and the deprecated APIs the targets'
 * API servers report (deprecated-api-reader.ts), and writes the version through the controller's writer. With
 * `snapshots.beforeChange` it makes a ClusterSnapshot of each Cluster first (the preflight holds the stage until each
 * is Complete).
 */
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import type { JsonObject } from "../../../api/common.ts";
import { CLUSTER_SNAPSHOT_RESOURCE } from "../../../api/constants/cluster-snapshot.ts";
import {
  CHANGED_BY_ROLLOUT_ANNOTATION,
  ROLLOUT_SNAPSHOT_LABELS,
  SETTINGS_FROM_ROLLOUT_ANNOTATION,
} from "../../../api/constants/rollout.ts";
import { RESOURCES } from "../../../api/constants.ts";
import { errorMessage, isConflict } from "../../../api/error-message.ts";
import { objectKey } from "../../../api/object-key.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import type { Rollout } from "../../../api/rollout.ts";
import { explainRollout, ROLLOUT_DEFINITION } from "../../../machines/rollout/definition.ts";
import { type DeprecatedApiRead, preflightCandidates } from "../../../machines/rollout/preflight.ts";
import { mergeSettings } from "../../../machines/rollout/settings.ts";
import { type RolloutCommand, stepRollout } from "../../../machines/rollout/step.ts";
import { freezeTargets } from "../../../machines/rollout/targets.ts";
import { Patch, type PatchOperation } from "../../../machines/shared/json-patch.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import { RecentWrites } from "../../controllers/recent-writes.ts";
import { type MachineKind, wake } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { SNAPSHOTS } from "../cluster-snapshot/kind.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { clustersOfNamespaceWake } from "../shared/namespace-wake.ts";
import { askCluster } from "./ask-cluster.ts";
import { ROLLOUTS } from "./caches.ts";
import { DeprecatedApiReads } from "./deprecated-api-reader.ts";
import { RolloutMetrics } from "./rollout-metrics.ts";

export { ROLLOUTS };

/**
 * What one look reads: the Clusters of the rollout's namespace (with this engine's latest writes over the cache),
 * the ClusterProfiles, and the deprecated APIs of the targets the preflight may check next (by Cluster uid).
 */
export interface RolloutObservation {
  readonly clusters: readonly Cluster[];
  readonly profiles: readonly ClusterProfile[];
  readonly deprecatedApis: ReadonlyMap<string, DeprecatedApiRead>;
  /** The ClusterSnapshots of its namespace this rollout made (`snapshots.beforeChange`). */
  readonly snapshots: readonly ClusterSnapshot[];
  /** A settings run: its ProviderConfig (undefined: missing), and why its backend refuses the patched settings. */
  readonly providerConfig?: ProviderConfig;
  readonly settingsRefused?: string;
}

/**
 * Per engine: the Clusters it wrote a moment ago, so a look before the cache catches up never asks one twice; the
 * targets' recent deprecated-API reads; the kind's metrics.
 */
interface RolloutState {
  readonly written: RecentWrites<Cluster>;
  readonly deprecated: DeprecatedApiReads;
  readonly metrics: RolloutMetrics;
}

/** A running rollout looks again every 5 s (gates, timeouts); Cluster changes wake it sooner. */
export const DEFAULT_ROLLOUT_TIMING: RequeueTiming = { pollMs: 5_000, retryMs: 5_000, resyncMs: 600_000 };

/**
 * The operations asking a Cluster for `version` (when the run brings one), naming the run that asked, and for a
 * settings run naming it as the run whose settings the Cluster gets: one write.
 */
export function changeOperations(
  cluster: Cluster,
  version: string | undefined,
  changedBy: string,
  settings = false,
): PatchOperation[] {
  const annotations = cluster.metadata.annotations;
  const kubernetes = cluster.spec?.kubernetes;
  const added = {
    [CHANGED_BY_ROLLOUT_ANNOTATION]: changedBy,
    ...(settings ? { [SETTINGS_FROM_ROLLOUT_ANNOTATION]: changedBy } : {}),
  };
  return [
    ...(annotations
      ? Object.entries(added).map(([key, value]) => Patch.add(["metadata", "annotations", key], value))
      : [Patch.add(["metadata", "annotations"], added)]),
    ...(version === undefined
      ? []
      : [
          kubernetes
            ? Patch.add(["spec", "kubernetes", "version"], version)
            : Patch.add(["spec", "kubernetes"], { version }),
        ]),
  ];
}

/** Why the backend of `config` refuses `settings` (undefined: it takes them, or cannot say). */
async function refusal(
  config: ProviderConfig,
  settings: JsonObject,
  context: Parameters<RolloutKind["open"]>[1],
): Promise<string | undefined> {
  try {
    return (await context.backends.forConfig(config)).checkSettings?.(settings);
  } catch (error) {
    return `its backend ${config.spec.backend} is not available: ${errorMessage(error)}`;
  }
}

type RolloutKind = MachineKind<Rollout, RolloutObservation, RolloutCommand, RequeueTiming, RolloutState>;

/** The Rollout kind; `kindSettings.Rollout.enabled: false` turns it off. */
export const rolloutKind: RolloutKind = {
  definition: ROLLOUT_DEFINITION,
  cache: ROLLOUTS,
  timing: DEFAULT_ROLLOUT_TIMING,
  enabled: (settings) => settings.enabled !== false,
  reads: [PROFILE_CACHES.profiles, PROFILE_CACHES.providerConfigs, SNAPSHOTS],
  state: (context) => ({
    written: new RecentWrites<Cluster>(context.clock),
    deprecated: new DeprecatedApiReads(context.clock),
    metrics: new RolloutMetrics(),
  }),
  controllers(context, _settings, parts) {
    context.state.metrics.register(parts.metrics.registry, () => context.informers.of(ROLLOUTS).list());
    return [];
  },
  // A Cluster that changes (Ready at the new version, failed, deleted) wakes the rollouts of its namespace.
  wakes: [
    clustersOfNamespaceWake(ROLLOUTS),
    // A snapshot a rollout made before a change (Complete, failed, deleted) wakes that rollout.
    wake(SNAPSHOTS, (snapshot: ClusterSnapshot) => {
      const rollout = snapshot.metadata.labels?.[ROLLOUT_SNAPSHOT_LABELS.rollout];
      return rollout ? [`${snapshot.metadata.namespace}/${rollout}`] : [];
    }),
    // A settings run's ProviderConfig made, changed or deleted: the run looks again (e.g. one held for its absence).
    wake(PROFILE_CACHES.providerConfigs, (config: ProviderConfig, context) =>
      context.informers
        .of(ROLLOUTS)
        .list()
        .filter((rollout) => rollout.spec.settings?.providerConfig === config.metadata.name)
        .map(objectKey),
    ),
  ],

  async open(rollout, context) {
    const namespace = rollout.metadata.namespace ?? "";
    const clusters = () =>
      context.state.written.overlay(
        context.informers
          .of(CLUSTER_CACHES.clusters)
          .list()
          .filter((cluster) => cluster.metadata.namespace === namespace),
        objectKey,
      );
    return {
      async observe(current) {
        const seen = clusters();
        const status = current.status;
        const idle =
          status?.phase === "Halted" ||
          status?.phase === "Succeeded" ||
          status?.phase === "Aborted" ||
          current.spec.paused === true ||
          current.spec.abort === true;
        // Only the Clusters the preflight may check next are read (their API servers, through admin access), and
        // only while the run may ask Clusters.
        const candidates = idle
          ? []
          : preflightCandidates(
              current.spec,
              status?.targets ??
                freezeTargets(
                  current.spec,
                  namespace,
                  seen,
                  context.informers.of(PROFILE_CACHES.profiles).list(),
                ),
            );
        const byName = new Map(seen.map((cluster) => [cluster.metadata.name ?? "", cluster]));
        const toRead = candidates.flatMap((target) => {
          const cluster = byName.get(target.name);
          return cluster && cluster.metadata.uid === target.uid ? [cluster] : [];
        });
        const uid = current.metadata.uid;
        const wanted = current.spec.settings;
        const providerConfig = wanted
          ? context.informers.of(PROFILE_CACHES.providerConfigs).get(wanted.providerConfig)
          : undefined;
        const refused =
          wanted && providerConfig
            ? await refusal(
                providerConfig,
                mergeSettings(providerConfig.spec.settings, wanted.patch),
                context,
              )
            : undefined;
        return {
          clusters: seen,
          snapshots: context.informers
            .of(SNAPSHOTS)
            .list()
            .filter(
              (snapshot) =>
                snapshot.metadata.namespace === namespace &&
                snapshot.metadata.labels?.[ROLLOUT_SNAPSHOT_LABELS.rolloutUid] === uid,
            ),
          profiles: context.informers.of(PROFILE_CACHES.profiles).list(),
          deprecatedApis: await context.state.deprecated.ofAll(toRead, context),
          ...(providerConfig ? { providerConfig } : {}),
          ...(refused !== undefined ? { settingsRefused: refused } : {}),
        };
      },
      step: (current, observation, { now, nowMs, lastError }) => {
        const result = stepRollout({
          object: current,
          clusters: observation.clusters,
          profiles: observation.profiles,
          deprecatedApis: observation.deprecatedApis,
          snapshots: observation.snapshots,
          ...(observation.providerConfig ? { providerConfig: observation.providerConfig } : {}),
          ...(observation.settingsRefused !== undefined
            ? { settingsRefused: observation.settingsRefused }
            : {}),
          now,
          nowMs,
          ...(lastError ? { lastError } : {}),
          timing: context.timing,
        });
        context.state.metrics.stepped(current.metadata.uid ?? "", current.status, result.desired.status);
        return result;
      },
      async run(commands, _object, writer) {
        for (const command of commands) {
          if (command.kind === "snapshot") {
            const custom = context.kubeConfig.makeApiClient(CustomObjectsApi);
            for (const body of command.snapshots) {
              try {
                await custom.createNamespacedCustomObject({ ...CLUSTER_SNAPSHOT_RESOURCE, namespace, body });
              } catch (error) {
                if (!isConflict(error)) throw error; // made already (its name is the run's): nothing to do
              }
            }
            continue;
          }
          if (command.kind === "applySettings") {
            // Guarded by the config's resourceVersion the step decided on: a config changed since is decided again.
            await writer.patch(
              {
                ...RESOURCES.ProviderConfig,
                name: command.providerConfig,
                resourceVersion: command.resourceVersion,
              },
              [Patch.add(["spec", "settings"], command.settings)],
              undefined,
            );
            continue;
          }
          const byName = new Map(clusters().map((cluster) => [cluster.metadata.name ?? "", cluster]));
          for (const change of command.clusters) {
            const cluster = byName.get(change.name);
            if (!cluster || cluster.metadata.uid !== change.uid) continue; // gone meanwhile: skipped next look
            // Not written (its spec changed since, or it is gone): the next look decides again from it as it is.
            const written = await askCluster({
              kubeConfig: context.kubeConfig,
              writer,
              namespace,
              change,
              known: cluster,
              operations: (fresh) =>
                changeOperations(fresh, command.version, command.changedBy, command.settings),
            });
            if (written) {
              context.state.written.wrote(objectKey(cluster), written);
              context.state.metrics.changed(1);
            }
          }
        }
      },
    };
  },

  describe: (command) =>
    command.kind === "snapshot"
      ? `snapshot ${command.snapshots.length} Cluster(s) before changing them`
      : command.kind === "applySettings"
        ? `give ProviderConfig ${command.providerConfig} the new settings`
        : `ask ${command.clusters.length} Cluster(s) for ${[command.version, command.settings ? "the new settings" : ""].filter(Boolean).join(" and ")}`,

  explain: async (rollout) => explainRollout(rollout),
};
