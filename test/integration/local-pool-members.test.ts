/**
 * The `local` backend's warm pools (contract 1.5) on real etcd + kube-apiserver processes: a member made for no
 * Cluster, bound later to a Cluster's uid (a record: the running control plane keeps its folder), then served,
 * reached and deleted under that uid; a new backend instance on the same folder finds the member and its binding.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import { checkPoolConformance } from "../../src/providers/conformance-pools.ts";
import { createBackend } from "../../src/providers/local.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { localBackends } from "../support/local-backend-state.ts";
import { observationWhere } from "../support/observation-where.ts";

const version = kubeAssetVersions(findKubeAssets()).kubernetes.replace(/^v/, "");
const locals = localBackends("local-pool-");
const state = locals.folder();
const open = () => locals.open(state);
const cluster: ClusterTarget = {
  uid: "4a1e6f0e-0000-4000-8000-00000000b001",
  namespace: "local-test",
  name: "bound",
  tenancy: "Exclusive",
  profile: "local.test.local",
  providerConfig: "local",
};
const isReady = (o: ClusterObservation) => o.exists && o.phase === "ready";

afterAll(async () => {
  await locals.close();
}, 120_000);

describe("the local backend's pool members", { timeout: 120_000 }, () => {
  it("are made for no Cluster, bound to one by uid, served, found again and deleted under it", async () => {
    const backend = await open();
    const pools = backend.pools;
    if (!pools) throw new Error("the local backend declares no pools");
    await pools.createMember(
      { id: "pool-0000000000a1", pool: "warm", version },
      { ...cluster, uid: "pool-0000000000a1" },
    );
    const listed = await eventually(
      async () =>
        satisfying(
          await pools.listMembers("warm"),
          (members) => members.length === 1 && isReady(members[0]?.observation ?? { exists: false }),
        ),
      { what: "the member ready", timeoutMs: 90_000, intervalMs: 200 },
    );
    expect(listed[0]).toMatchObject({ id: "pool-0000000000a1", pool: "warm", version });
    expect((await backend.observe(cluster)).exists).toBe(false);

    await pools.bind("pool-0000000000a1", cluster);
    await pools.bind("pool-0000000000a1", cluster); // idempotent
    const served = await observationWhere(backend, cluster, isReady, { timeoutMs: 5_000 });
    expect(served.exists && served.endpoint).toBe(
      listed[0]?.observation.exists && listed[0].observation.endpoint,
    );
    await backend.create(cluster, version); // nothing new: the Cluster's cluster is the member's
    expect(readdirSync(join(state, "clusters"))).toEqual(["pool-0000000000a1"]);
    const access = await backend.adminAccess(cluster);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(access?.kubeconfig ?? "");
    expect((await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);

    // A new instance on the same folder (a restarted engine) finds the member and its binding.
    const again = await open();
    expect(await again.pools?.listMembers("warm")).toMatchObject([
      { id: "pool-0000000000a1", boundTo: cluster.uid },
    ]);
    expect(isReady(await again.observe(cluster))).toBe(true);

    await again.delete(cluster);
    expect((await again.observe(cluster)).exists).toBe(false);
    expect(await again.pools?.listMembers("warm")).toEqual([]);
    expect(readdirSync(join(state, "clusters"))).toEqual([]);
  });

  it("pass the pool conformance check, sleeping members too (a restart of the backend between every two steps)", async () => {
    await checkPoolConformance(createBackend, { readyTimeoutMs: 90_000, sleepingMembers: true });
  });
});
