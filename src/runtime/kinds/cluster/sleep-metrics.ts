/**
 * Hibernation's metrics, the Cluster kind's own: how many Clusters sleep or are on their way (read from the
 * Cluster cache at scrape time, by the machine state in their status), and how long a wake takes, from the step
 * that ordered it to the one that found the cluster Ready (a wake an engine restart interrupted is not counted).
 */
import { Histogram, type Registry } from "prom-client";
import type { Cluster } from "../../../api/cluster.ts";
import { HIBERNATION_STATES } from "../../../api/constants/hibernation.ts";
import { countsBy, scrapedGauge } from "../../scraped-gauge.ts";

/** Seconds to wake: from a local control plane's seconds to a cloud's minutes. */
const WAKE_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];

/** The state of a Cluster that is asleep or on its way (hibernating, hibernated, waking); none for the others. */
function sleepingState(cluster: Cluster): string[] {
  const state = cluster.status?.providerStatus?.state;
  return typeof state === "string" && HIBERNATION_STATES.has(state) ? [state] : [];
}

export class SleepMetrics {
  /** When each Cluster (by uid) entered `waking`, in ms. */
  readonly #wakingSince = new Map<string, number>();
  #timeToWake: Histogram | undefined;

  /** Registers the metrics into `registry`, counting the Clusters `clusters` lists at each scrape. */
  register(registry: Registry, clusters: () => readonly Cluster[]): void {
    scrapedGauge(
      registry,
      {
        name: "openmcp_engine_clusters_sleeping",
        help: "Clusters this provider serves that are asleep or on their way, by state: hibernating, hibernated, waking",
        labelNames: ["state"],
      },
      () => countsBy("state", clusters().flatMap(sleepingState), HIBERNATION_STATES),
    );
    this.#timeToWake = new Histogram({
      name: "openmcp_engine_cluster_wake_seconds",
      help: "Time from ordering a Cluster's wake to its Ready, as this engine saw it",
      buckets: WAKE_BUCKETS,
      registers: [registry],
    });
  }

  /** A step of Cluster `uid` went from `previous` to `state` at `nowMs`. */
  stepped(uid: string, previous: string, state: string, nowMs: number): void {
    if (state === "waking" && previous !== "waking") this.#wakingSince.set(uid, nowMs);
    else if (state !== "waking") {
      const since = this.#wakingSince.get(uid);
      this.#wakingSince.delete(uid);
      if (since !== undefined && state === "ready") this.#timeToWake?.observe((nowMs - since) / 1_000);
    }
  }
}
