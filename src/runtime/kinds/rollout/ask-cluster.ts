/**
 * Asks one Cluster for what a run brings: one patch, guarded by the resourceVersion the step decided on. The
 * Cluster's own machine writes its status all the while (every engine's first look after a restart does), so a
 * write refused for that alone is sent again over a fresh read, as long as the Cluster's spec is still the one the
 * step decided on (its generation). Anything else (a spec changed since, the Cluster gone or made anew) is left to
 * the next look, which decides again from the Cluster as it is. Without this, a refused write was dropped silently
 * while the step's Event said the Cluster was asked, and the next look asked it again: two Events for one ask.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import { RESOURCES } from "../../../api/constants.ts";
import type { TargetChange } from "../../../machines/rollout/progress.ts";
import type { PatchOperation } from "../../../machines/shared/json-patch.ts";
import { ConflictError, GoneError } from "../../controllers/errors.ts";
import type { CommandWriter } from "../../machine-kind.ts";
import { readCluster } from "../cluster/read-cluster.ts";

/** A write refused this many times in a row is left to the next look. */
const MAX_ATTEMPTS = 4;

export interface ClusterAsk {
  readonly kubeConfig: KubeConfig;
  readonly writer: CommandWriter;
  readonly namespace: string;
  readonly change: TargetChange;
  /** The Cluster as the engine knows it (cache with its own writes over it). */
  readonly known: Cluster;
  /** The operations asking `cluster`. */
  readonly operations: (cluster: Cluster) => PatchOperation[];
}

/** The Cluster as written, or undefined when it was not (its spec changed since, or it is gone). */
export async function askCluster(ask: ClusterAsk): Promise<Cluster | undefined> {
  const { change, namespace } = ask;
  let cluster = ask.known;
  let resourceVersion = change.resourceVersion;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      const written = await ask.writer.patch(
        { ...RESOURCES.Cluster, namespace, name: change.name, uid: change.uid, resourceVersion },
        ask.operations(cluster),
        undefined,
      );
      return written as Cluster;
    } catch (error) {
      if (error instanceof GoneError) return undefined;
      if (!(error instanceof ConflictError)) throw error;
    }
    const fresh = await readCluster(ask.kubeConfig, namespace, change.name);
    if (!fresh || fresh.metadata.uid !== change.uid || fresh.metadata.deletionTimestamp) return undefined;
    if ((fresh.metadata.generation ?? 0) !== change.generation) return undefined;
    cluster = fresh;
    resourceVersion = fresh.metadata.resourceVersion ?? "";
  }
  return undefined;
}
