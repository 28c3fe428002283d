/**
 * Reads which deprecated APIs a rollout's target Cluster has been asked for: its API server's `/metrics`, through
 * the admin access its backend gives (the engine's shared AdminAccessCache), parsed by the pure
 * `parseDeprecatedApis`. What each read gave is kept per Cluster uid for a while: the gauge changes seldom
 * (kube-apiserver sets it on the first request of an API and keeps it until it restarts), and a stage is checked on
 * every look. Never a credential in a message.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "../../../api/cluster.ts";
import { errorMessage } from "../../../api/error-message.ts";
import { clusterTarget } from "../../../machines/cluster/step.ts";
import { parseDeprecatedApis } from "../../../machines/rollout/deprecated-apis.ts";
import type { DeprecatedApiRead } from "../../../machines/rollout/preflight.ts";
import { getApiServerText } from "../../../util/api-server-request.ts";
import type { Clock } from "../../clock.ts";
import type { KindContext } from "../../machine-kind.ts";
import { profileOffer } from "../shared/profile-offer.ts";

/** How long one read of a Cluster's deprecated APIs stands. */
const READ_STANDS_MS = 30_000;

/** At most this many API servers read at once (a /metrics answer is about 1 MB): a large stage is read in turns. */
const READS_AT_ONCE = 8;

/** A KubeConfig of the kubeconfig text the backend's admin access gives. */
function kubeConfigOf(kubeconfig: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  return kubeConfig;
}

/** Per engine: the last read of each Cluster (by uid) and when. */
export class DeprecatedApiReads {
  readonly #clock: Clock;
  readonly #reads = new Map<string, { readonly read: DeprecatedApiRead; readonly atMs: number }>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  #prunedAtMs = 0;

  /** What each of `clusters`' API servers says, by uid, at most {@link READS_AT_ONCE} read at once. */
  async ofAll(clusters: readonly Cluster[], context: KindContext): Promise<Map<string, DeprecatedApiRead>> {
    const reads = new Map<string, DeprecatedApiRead>();
    let next = 0;
    const worker = async () => {
      while (next < clusters.length) {
        const cluster = clusters[next++] as Cluster;
        reads.set(cluster.metadata.uid ?? "", await this.of(cluster, context));
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, clusters.length) }, worker));
    return reads;
  }

  /** What `cluster`'s API server says, read now unless a read of it stands. */
  async of(cluster: Cluster, context: KindContext): Promise<DeprecatedApiRead> {
    this.#prune();
    const uid = cluster.metadata.uid ?? "";
    const known = this.#reads.get(uid);
    if (known && this.#clock.now() - known.atMs < READ_STANDS_MS) return known.read;
    const read = await readOnce(cluster, context);
    this.#reads.set(uid, { read, atMs: this.#clock.now() });
    return read;
  }

  /** Drops reads that no longer stand (of Clusters done or deleted since), at most once per standing time. */
  #prune(): void {
    const now = this.#clock.now();
    if (now - this.#prunedAtMs < READ_STANDS_MS) return;
    this.#prunedAtMs = now;
    for (const [uid, known] of this.#reads) if (now - known.atMs >= READ_STANDS_MS) this.#reads.delete(uid);
  }
}

async function readOnce(cluster: Cluster, context: KindContext): Promise<DeprecatedApiRead> {
  const name = cluster.metadata.name ?? "";
  const { profile, settings } = profileOffer(context, cluster.spec.profile, cluster);
  const target = clusterTarget(cluster, profile, settings);
  try {
    const backend = await context.backends.of(target);
    if (!backend.capabilities.adminAccess)
      return {
        kind: "unavailable",
        why: `backend ${backend.name} gives no admin access to read its API server`,
      };
    const access = await context.adminAccess.get(target, context.timing.resyncMs);
    if (!access)
      return { kind: "unavailable", why: `backend ${backend.name} gives no admin access to it yet` };
    return {
      kind: "read",
      apis: parseDeprecatedApis(await getApiServerText(kubeConfigOf(access.kubeconfig), "/metrics")),
    };
  } catch (error) {
    return { kind: "unavailable", why: `reading Cluster ${name}'s /metrics failed: ${errorMessage(error)}` };
  }
}
