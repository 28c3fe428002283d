/** The objects the snapshot tests write into a cluster and compare after a restore or a clone (by content). */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { expect } from "vitest";
import { reuseConnections } from "../../src/runtime/api-server/connection-reuse.ts";
import { eventually } from "./eventually.ts";

/** The namespace the snapshot tests write their ConfigMaps into. */
export const APP = "app";

/** The ConfigMaps of namespace `app` named `object-…`, by name, as data only (compared by content). */
export async function contents(kubeConfig: KubeConfig): Promise<Map<string, Record<string, string>>> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const found = new Map<string, Record<string, string>>();
  let next: string | undefined;
  do {
    const page = await core.listNamespacedConfigMap({
      namespace: APP,
      limit: 500,
      ...(next ? { _continue: next } : {}),
    });
    for (const item of page.items)
      if (item.metadata?.name?.startsWith("object-")) found.set(item.metadata.name, item.data ?? {});
    next = page.metadata?._continue || undefined;
  } while (next);
  return found;
}

/** ConfigMap `i` as written (labelled `batch: before`): some bytes of its own, so a mix-up shows. */
export const configMapOf = (i: number): V1ConfigMap => ({
  metadata: { name: `object-${String(i).padStart(5, "0")}`, labels: { batch: "before" } },
  data: { index: String(i), payload: `${i}:`.padEnd(200, String.fromCharCode(97 + (i % 26))) },
});

/**
 * Changes the cluster after its snapshot, as a restore must undo: every ConfigMap written before deleted and one more
 * (`object-after`) made; resolves once the cluster shows only that one.
 */
export async function changeAfterSnapshot(kubeConfig: KubeConfig): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await core.deleteCollectionNamespacedConfigMap({ namespace: APP, labelSelector: "batch=before" });
  await core.createNamespacedConfigMap({ namespace: APP, body: { metadata: { name: "object-after" } } });
  await eventually(async () => expect((await contents(kubeConfig)).size).toBe(1), { timeoutMs: 60_000 });
}

/**
 * Makes namespace `app` and writes ConfigMaps 0..count-1 ({@link configMapOf}) into the cluster `kubeConfig` points at,
 * `parallel` at a time, over one pool of TLS connections (kept for `kubeConfig`'s later requests too): client-node's
 * own way opens a connection per request, a thousand handshakes for a thousand objects.
 */
export async function writeConfigMaps(kubeConfig: KubeConfig, count: number, parallel = 16): Promise<void> {
  const core = reuseConnections(kubeConfig).makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: APP } } });
  await inParallel(count, parallel, (i) =>
    core.createNamespacedConfigMap({ namespace: APP, body: configMapOf(i) }),
  );
}

/** Runs `work` for 0..count-1, `parallel` at a time. */
async function inParallel(
  count: number,
  parallel: number,
  work: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
