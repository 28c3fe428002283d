/**
 * The ClusterSnapshot kind: the Cluster's backend takes a snapshot of its control plane into a folder under the
 * engine's snapshot folder, and rolls the Cluster back to it when the restore annotation asks (contract 1.7). A
 * deleted snapshot's data is removed from its store by the engine itself (no backend needed: a snapshot outlives its
 * Cluster), once no Cluster is being made from it.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { ClusterBackend } from "../../../api/backend-contract.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterSnapshot } from "../../../api/cluster-snapshot.ts";
import {
  CLUSTER_SNAPSHOT_KIND,
  CLUSTER_SNAPSHOT_REASONS,
  RESTORE_FROM_ANNOTATION,
} from "../../../api/constants/cluster-snapshot.ts";
import { CLUSTER_PHASES } from "../../../api/constants.ts";
import {
  describeSnapshotLocation,
  isSnapshotRejection,
  isSnapshotStorageFailure,
  type SnapshotManifest,
  type SnapshotStorageFailure,
} from "../../../api/control-plane-snapshot.ts";
import { objectKey } from "../../../api/object-key.ts";
import { clusterResponsibility, clusterTarget } from "../../../machines/cluster/step.ts";
import {
  CLUSTER_SNAPSHOT_DEFINITION,
  explainClusterSnapshot,
} from "../../../machines/cluster-snapshot/definition.ts";
import type { RestoreOutcome, SnapshotClusterFact } from "../../../machines/cluster-snapshot/machine.ts";
import { isMadeFrom } from "../../../machines/cluster-snapshot/made-from.ts";
import { type SnapshotCommand, stepClusterSnapshot } from "../../../machines/cluster-snapshot/step.ts";
import { stepBasics } from "../../../machines/shared/kind-step.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import { removeSnapshot } from "../../../providers/shared/snapshot-store.ts";
import type { CacheSpec } from "../../informers.ts";
import { type KindSettings, type MachineKind, wake } from "../../machine-kind.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { readCluster } from "../cluster/read-cluster.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { profileClaimant, profileOffer } from "../shared/profile-offer.ts";
import { registerSnapshotsNotRemoved } from "./snapshot-metrics.ts";
import { withStorageCredentials } from "./storage-credentials.ts";

/** The kind's settings (`kindSettings.ClusterSnapshot`). */
export interface ClusterSnapshotSettings extends KindSettings {
  /** `false` turns the kind off. */
  readonly enabled?: boolean;
  /**
   * The folder every snapshot goes under (`<folder>/<namespace or spec.storage.folder.path>/<name>-<uid>/`): the
   * command line's engine sets `<--state-dir>/snapshots`; an embedded engine without it gets
   * `$XDG_STATE_HOME/openmcp-engine/snapshots` (`~/.local/state/…`). Snapshots hold keys: keep it the engine's own.
   */
  readonly folder?: string;
}

/** The cache of ClusterSnapshots. */
export const SNAPSHOTS: CacheSpec<ClusterSnapshot> = {
  name: CLUSTER_SNAPSHOT_KIND,
  kind: CLUSTER_SNAPSHOT_KIND,
  resource: CLUSTER_SNAPSHOT_DEFINITION.resource,
};

/** What one look reads: the snapshot's Cluster, and what this engine's commands returned. */
export interface SnapshotObservation {
  readonly cluster: SnapshotClusterFact;
  readonly taken?: SnapshotManifest;
  readonly restored?: RestoreOutcome;
  /** Why the storage failed the last command, when it did. */
  readonly storageFailure?: SnapshotStorageFailure;
  /** This engine removed the (deleted) snapshot's data from its store. */
  readonly removed?: boolean;
  /** Clusters being made from the snapshot now. */
  readonly usedBy: readonly string[];
}

/** Per engine: the snapshot folder, and what commands returned, by snapshot uid, until the status records it. */
interface SnapshotState {
  readonly root: string;
  readonly taken: Map<string, SnapshotManifest>;
  readonly restored: Map<string, RestoreOutcome>;
  /** Why the storage failed a snapshot's last command (by uid), until one succeeds. */
  readonly storageFailures: Map<string, SnapshotStorageFailure>;
  /** Uids of deleted snapshots whose data this engine removed (until the object is gone). */
  readonly removed: Set<string>;
}

/** Polls every second while taking or restoring; a failure is retried after 5 s; at rest, a look every 10 minutes. */
export const DEFAULT_SNAPSHOT_TIMING: RequeueTiming = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };

/** The default snapshot folder (see {@link ClusterSnapshotSettings.folder}). */
export function defaultSnapshotFolder(): string {
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "openmcp-engine", "snapshots");
}

/** The ClusterSnapshot kind; `kindSettings.ClusterSnapshot.enabled: false` turns it off. */
export const clusterSnapshotKind: MachineKind<
  ClusterSnapshot,
  SnapshotObservation,
  SnapshotCommand,
  RequeueTiming,
  SnapshotState,
  ClusterSnapshotSettings
> = {
  definition: CLUSTER_SNAPSHOT_DEFINITION,
  cache: SNAPSHOTS,
  timing: DEFAULT_SNAPSHOT_TIMING,
  enabled: (settings) => settings.enabled !== false,
  state: (_, settings) => ({
    root: resolve(settings.folder ?? defaultSnapshotFolder()),
    taken: new Map(),
    restored: new Map(),
    storageFailures: new Map(),
    removed: new Set(),
  }),
  reads: [PROFILE_CACHES.profiles, PROFILE_CACHES.providerConfigs],
  controllers(context, _settings, parts) {
    registerSnapshotsNotRemoved(parts.metrics.registry, () => context.informers.of(SNAPSHOTS).list());
    return [];
  },
  // A Cluster that appears, gets Ready or goes wakes the snapshots of it.
  wakes: [
    wake(CLUSTER_CACHES.clusters, (cluster: Cluster, context) =>
      context.informers
        .of(SNAPSHOTS)
        .list()
        .filter(
          (snapshot) =>
            snapshot.metadata.namespace === cluster.metadata.namespace &&
            snapshot.spec.cluster.name === cluster.metadata.name,
        )
        .map(objectKey),
    ),
    // A Cluster made from a snapshot that changes (made, deleted) wakes that snapshot: its deletion may be held for it.
    wake(CLUSTER_CACHES.clusters, (cluster: Cluster) => {
      const source = cluster.metadata.annotations?.[RESTORE_FROM_ANNOTATION];
      return source ? [`${cluster.metadata.namespace}/${source}`] : [];
    }),
  ],

  async open(snapshot, context) {
    const namespace = snapshot.metadata.namespace ?? "";
    const uid = snapshot.metadata.uid ?? objectKey(snapshot);
    const cluster =
      context.informers.of(CLUSTER_CACHES.clusters).get(`${namespace}/${snapshot.spec.cluster.name}`) ??
      // Not in the cache: asked of the API server before the snapshot fails for it (a Cluster and its snapshot
      // applied together may reach the cache after the snapshot).
      (await readCluster(context.kubeConfig, namespace, snapshot.spec.cluster.name));
    const offer = cluster ? profileOffer(context, cluster.spec.profile) : undefined;
    // Another provider's Cluster: its engine takes the snapshot; this one writes nothing.
    if (cluster && clusterResponsibility(cluster, offer?.profile, profileClaimant(context)) !== "ours")
      return undefined;
    const target = cluster ? clusterTarget(cluster, offer?.profile, offer?.settings) : undefined;
    const backend = target ? await context.backends.of(target).catch(() => undefined) : undefined;
    const fact: SnapshotClusterFact = cluster
      ? {
          found: true,
          uid: cluster.metadata.uid ?? "",
          ready: cluster.status?.phase === CLUSTER_PHASES.ready,
          ...(backend && (!backend.snapshot || !backend.restore)
            ? {
                unsupported: `its backend ${backend.name} takes no snapshots (contract 1.7's snapshot and restore)`,
              }
            : {}),
        }
      : { found: false };
    return {
      async observe() {
        const taken = context.state.taken.get(uid);
        const restored = context.state.restored.get(uid);
        const storageFailure = context.state.storageFailures.get(uid);
        const usedBy = context.informers
          .of(CLUSTER_CACHES.clusters)
          .list()
          .filter((each) => isMadeFrom(each, snapshot))
          .map((each) => each.metadata.name ?? "")
          .sort();
        return {
          cluster: fact,
          usedBy,
          ...(context.state.removed.has(uid) ? { removed: true } : {}),
          ...(taken ? { taken } : {}),
          ...(restored ? { restored } : {}),
          ...(storageFailure ? { storageFailure } : {}),
        };
      },
      step: (current, observation, look) =>
        stepClusterSnapshot({
          object: current,
          cluster: observation.cluster,
          root: context.state.root,
          ...(observation.taken ? { taken: observation.taken } : {}),
          ...(observation.restored ? { restored: observation.restored } : {}),
          ...(observation.storageFailure ? { storageFailure: observation.storageFailure } : {}),
          ...(observation.removed ? { removed: true } : {}),
          usedBy: observation.usedBy,
          ...stepBasics(look, context.timing),
        }),
      run: (commands) =>
        runSnapshotCommands(commands, {
          snapshot,
          uid,
          state: context.state,
          kubeConfig: context.kubeConfig,
          ...(target && backend ? { at: { target, backend } } : {}),
        }),
    };
  },

  describe: (command) =>
    command.kind === "snapshot"
      ? `take snapshot ${command.snapshot.name} into ${describeSnapshotLocation(command.snapshot.location)}`
      : command.kind === "remove"
        ? `remove snapshot ${command.snapshot.name} from ${describeSnapshotLocation(command.snapshot.location)}`
        : `roll back to snapshot ${command.snapshot.name} (request ${command.request})`,

  explain: async (snapshot) => explainClusterSnapshot(snapshot),
};

/** What a snapshot's commands are carried out with. */
interface SnapshotRun {
  readonly snapshot: ClusterSnapshot;
  readonly uid: string;
  readonly state: SnapshotState;
  readonly kubeConfig: KubeConfig;
  /** The Cluster's target and its backend, when both are known. */
  readonly at?: { readonly target: ClusterTarget; readonly backend: ClusterBackend };
}

/**
 * Carries out a snapshot's commands: take it or restore it through the Cluster's backend (the store's keys join the
 * reference here only), or remove a deleted snapshot's data from the engine's own store, whatever became of the
 * Cluster. Storage failures are remembered for the next look; everything failing is retried.
 */
async function runSnapshotCommands(commands: readonly SnapshotCommand[], run: SnapshotRun): Promise<void> {
  const { snapshot, uid, state, kubeConfig } = run;
  const namespace = snapshot.metadata.namespace ?? "";
  const failed = (error: unknown) => {
    if (isSnapshotStorageFailure(error)) state.storageFailures.set(uid, error.reason);
    else state.storageFailures.delete(uid);
  };
  for (const command of commands) {
    try {
      const reference = await withStorageCredentials(command.snapshot, kubeConfig);
      if (command.kind === "remove") {
        await removeSnapshot(reference);
        state.removed.add(uid); // the finalizer goes at the next look
      } else {
        if (!run.at)
          throw new Error(`Cluster ${namespace}/${snapshot.spec.cluster.name} or its backend is unknown`);
        const { target, backend } = run.at;
        if (command.kind === "snapshot") {
          if (!backend.snapshot) throw new Error(`backend ${backend.name} takes no snapshots`);
          state.taken.set(uid, await backend.snapshot(target, reference));
        } else await restoreSnapshot(run, command.request, reference);
      }
      state.storageFailures.delete(uid);
    } catch (error) {
      failed(error);
      throw error; // retried (for a removal, the finalizer stays meanwhile)
    }
  }
}

/** Rolls the Cluster back to the snapshot; a snapshot the backend refuses is an outcome on the object, not retried. */
async function restoreSnapshot(
  run: SnapshotRun,
  request: string,
  reference: SnapshotCommand["snapshot"],
): Promise<void> {
  const backend = run.at?.backend;
  if (!run.at || !backend?.restore) throw new Error(`backend ${backend?.name} restores no snapshots`);
  const namespace = run.snapshot.metadata.namespace ?? "";
  try {
    await backend.restore(run.at.target, reference);
    run.state.restored.set(run.uid, {
      request,
      outcome: CLUSTER_SNAPSHOT_REASONS.Restored,
      message: `Cluster ${namespace}/${run.at.target.name} rolled back to this snapshot (${run.snapshot.status?.takenAt ?? "?"}); its endpoint and certificate authority are unchanged`,
    });
  } catch (error) {
    if (!isSnapshotRejection(error)) throw error; // retried
    run.state.restored.set(run.uid, { request, outcome: error.reason, message: error.message });
  }
}
