/**
 * Stands in for your infrastructure's API (a cloud SDK, a VM pool's REST API): clusters kept in memory.
 * Replace it with a client of the real thing; the backend in index.ts uses only this small surface.
 *
 * Like a real cloud it outlives a backend instance: there is one cloud per state folder, shared by every
 * instance made on that folder in this process, so a restarted backend finds the clusters the previous one
 * made. (Unlike a real cloud it does not outlive the process.)
 */

/** One cluster as the infrastructure keeps it. */
export interface CloudCluster {
  /** The infrastructure's own id: new for every cluster it makes. */
  readonly id: string;
  /** Labels the backend finds its clusters by. */
  readonly tags: Readonly<Record<string, string>>;
  readonly version: string;
  readonly state: "creating" | "running" | "updating" | "deleting";
  /** When the current state began, in ms since the epoch. */
  readonly since: number;
}

/** A cloud whose every operation takes `workMs` to finish. */
export class InMemoryCloud {
  readonly #clusters = new Map<string, CloudCluster>();
  readonly #workMs: number;
  #made = 0;

  constructor(workMs: number) {
    this.#workMs = workMs;
  }

  /** The clusters carrying `tag: value`, oldest first, as they are at `now`. */
  find(tag: string, value: string, now: number): CloudCluster[] {
    return this.list(now).filter((cluster) => cluster.tags[tag] === value);
  }

  /** Every cluster, as it is at `now`: work that has had its time is done. */
  list(now: number): CloudCluster[] {
    for (const cluster of [...this.#clusters.values()]) {
      if (now - cluster.since < this.#workMs) continue;
      if (cluster.state === "deleting") this.#clusters.delete(cluster.id);
      else if (cluster.state !== "running") this.#put({ ...cluster, state: "running", since: now });
    }
    return [...this.#clusters.values()];
  }

  /** Starts making a cluster; every call makes another one. */
  create(tags: Readonly<Record<string, string>>, version: string, now: number): CloudCluster {
    this.#made += 1;
    return this.#put({ id: `cl-${this.#made}`, tags, version, state: "creating", since: now });
  }

  /** Starts moving a cluster to `version`. */
  update(id: string, version: string, now: number): void {
    const cluster = this.#clusters.get(id);
    if (!cluster) throw new Error(`cluster ${id} does not exist`);
    if (cluster.version !== version) this.#put({ ...cluster, version, state: "updating", since: now });
  }

  /** Starts removing a cluster. */
  delete(id: string, now: number): void {
    const cluster = this.#clusters.get(id);
    if (cluster && cluster.state !== "deleting") this.#put({ ...cluster, state: "deleting", since: now });
  }

  #put(cluster: CloudCluster): CloudCluster {
    this.#clusters.set(cluster.id, cluster);
    return cluster;
  }
}

const clouds = new Map<string, InMemoryCloud>();

/** The cloud of one state folder (made on first use). */
export function cloudFor(stateDirectory: string, workMs: number): InMemoryCloud {
  let cloud = clouds.get(stateDirectory);
  if (!cloud) {
    cloud = new InMemoryCloud(workMs);
    clouds.set(stateDirectory, cloud);
  }
  return cloud;
}
