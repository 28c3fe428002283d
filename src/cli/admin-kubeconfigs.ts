/**
 * `up`'s admin kubeconfigs: one file per Ready Cluster, written each time a Cluster becomes Ready and
 * removed when the Cluster goes, for as long as `up` runs (a demo convenience: in production,
 * AccessRequests grant access).
 */

import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Cluster } from "../api/cluster.ts";
import { objectKey } from "../api/object-key.ts";
import { clusterTarget } from "../machines/cluster/step.ts";
import type { Engine } from "../runtime/engine.ts";
import { CACHES } from "../runtime/kinds/caches.ts";
import { errorMessage } from "../runtime/logger.ts";

/** What the keeper did, for `up` to tell the user. */
export type AdminKubeconfigChange =
  | { readonly type: "written"; readonly cluster: string; readonly file: string }
  | { readonly type: "removed"; readonly cluster: string; readonly file: string }
  | { readonly type: "failed"; readonly cluster: string; readonly error: string };

/** The kubeconfigs kept so far, and how to wait for the work in flight and to stop. */
export interface AdminKubeconfigs {
  /** `namespace/name` → file, for every Cluster whose kubeconfig is written now. */
  readonly files: ReadonlyMap<string, string>;
  /** Resolves once every write and removal started so far has finished. */
  settled(): Promise<void>;
  /** Stops reacting to the cache; the files stay (the control plane's folder goes with `up`). */
  stop(): void;
}

/**
 * Keeps `<folder>/<namespace>.<name>.kubeconfig` for every Ready Cluster of the engine's cache, readable
 * by its owner only: written when a Cluster becomes Ready (again, after an update), removed when it is
 * deleted. Does nothing if the backend gives no admin access. Files are written one at a time, in the
 * order the cache changed, so a removal never races the write before it.
 */
export function keepAdminKubeconfigs(
  engine: Engine,
  folder: string,
  onChange: (change: AdminKubeconfigChange) => void = () => {},
): AdminKubeconfigs {
  const files = new Map<string, string>();
  /** Clusters seen Ready since they last were not: written (or being written) once per time. */
  const ready = new Set<string>();
  let queue: Promise<void> = Promise.resolve();
  let stopped = false;
  const enqueue = (work: () => Promise<void>) => {
    queue = queue.then(() => (stopped ? undefined : work()));
  };
  const fileOf = (cluster: Cluster) =>
    join(folder, `${cluster.metadata.namespace}.${cluster.metadata.name}.kubeconfig`);

  const write = async (cluster: Cluster) => {
    const key = objectKey(cluster);
    try {
      const profile = engine.informers.of(CACHES.profiles).get(cluster.spec.profile);
      const access = await engine.backend.adminAccess(clusterTarget(cluster, profile));
      if (!access || !ready.has(key)) return;
      await mkdir(folder, { recursive: true });
      const file = fileOf(cluster);
      await writeFile(file, access.kubeconfig, { mode: 0o600 });
      files.set(key, file);
      onChange({ type: "written", cluster: key, file });
    } catch (error) {
      onChange({ type: "failed", cluster: key, error: errorMessage(error) });
    }
  };
  const remove = async (cluster: Cluster) => {
    const key = objectKey(cluster);
    const file = files.get(key);
    if (file === undefined) return;
    files.delete(key);
    await rm(file, { force: true });
    onChange({ type: "removed", cluster: key, file });
  };

  const look = (cluster: Cluster, gone: boolean) => {
    const key = objectKey(cluster);
    if (gone || cluster.metadata.deletionTimestamp) {
      ready.delete(key);
      enqueue(() => remove(cluster));
    } else if (cluster.status?.phase !== "Ready") {
      ready.delete(key);
    } else if (!ready.has(key)) {
      ready.add(key);
      enqueue(() => write(cluster));
    }
  };
  if (engine.backend.capabilities.adminAccess) {
    const clusters = engine.informers.of(CACHES.clusters);
    clusters.on((event) => look(event.object, event.type === "delete"));
    for (const cluster of clusters.list()) look(cluster, false); // those cached before we listened
  }
  return {
    files,
    settled: async () => {
      // Work enqueued while waiting joins the chain: wait until it stops growing.
      for (let last: Promise<void> | undefined; last !== queue; ) {
        last = queue;
        await last;
      }
    },
    stop: () => {
      stopped = true;
    },
  };
}
