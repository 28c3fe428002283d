/**
 * A kind cluster's second day, the `kind` backend against a real Docker engine. Snapshots (contract 1.7): ConfigMaps
 * written to it and a ServiceAccount token granted, a snapshot taken into a folder store (etcd's, out of the node,
 * with kubeadm's keys), the data changed, then rolled back in place: every ConfigMap as it was (compared by
 * content), the later one gone, the token of before and the admin kubeconfig working at the same endpoint. An
 * altered snapshot is refused, leaving the cluster as it was. `OPENMCP_SNAPSHOT_OBJECTS=10000` gives the issue's
 * figure (default 1,000, as the local test). Then a clone: a new Cluster made from the snapshot, every ConfigMap of
 * then in it, the token of before working there, with its own endpoint and node. Sleep (contract 1.6), with `docker ps`
 * as the witness: hibernate stops the first cluster's node container (the same one wake starts again), a new backend
 * instance still reports it hibernated, no snapshot is taken of it asleep, and after the wake the endpoint is the
 * same and the admin kubeconfig of before lists namespaces; the clone is deleted from hibernated.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { isSnapshotRejection, type SnapshotReference } from "../../src/api/control-plane-snapshot.ts";
import { conformanceContext } from "../../src/providers/conformance.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { containerToolchain, docker } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { APP, contents, writeConfigMaps } from "../support/snapshot-objects.ts";
import { stopAtFirstFailure } from "../support/stop-at-first-failure.ts";

const OBJECTS = Number(process.env.OPENMCP_SNAPSHOT_OBJECTS ?? 1_000);
const tools = containerToolchain();
const state = mkdtempSync(join(tmpdir(), "kind-snapshots-"));
const store = mkdtempSync(join(tmpdir(), "kind-snapshots-store-"));
const target: ClusterTarget = {
  uid: `${randomUUID().slice(0, 8)}-0000-4000-8000-00000000e001`,
  namespace: "kind-snapshots",
  name: "snapped",
  tenancy: "Exclusive",
  profile: "kind",
  providerConfig: "kind",
};
/** The Cluster made from the snapshot: another uid and name, so another kind cluster beside the first. */
const clone: ClusterTarget = {
  ...target,
  uid: `${randomUUID().slice(0, 8)}-0000-4000-8000-00000000e002`,
  name: "cloned",
};
const reference = (name: string): SnapshotReference => ({ location: { folder: store }, name });
let backend: ClusterBackend | undefined;
/** What the first test wrote and the token it granted, for the clone to be compared with. */
let written = new Map<string, Record<string, string>>();
let token = "";
let original: KubeConfig | undefined;

/** A kubeconfig for `server` (checked against `ca`) with a bearer token. */
function withToken(server: string, ca: string, bearer: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server, caData: ca }],
    users: [{ name: "reader", token: bearer }],
    contexts: [{ name: "c", cluster: "c", user: "reader" }],
    currentContext: "c",
  });
  return kubeConfig;
}

afterAll(async () => {
  for (const made of [target, clone]) await backend?.delete(made);
  for (const made of [target, clone])
    await eventually(async () => satisfying(await backend?.observe(made), (o) => o?.exists === false), {
      what: `kind cluster of ${made.name} gone`,
      timeoutMs: 180_000,
      intervalMs: 2_000,
    });
  rmSync(state, { recursive: true, force: true });
  rmSync(store, { recursive: true, force: true });
}, 240_000);

describe(`a real kind cluster with ${OBJECTS} ConfigMaps: snapshots, clones, sleep`, {
  timeout: 900_000,
}, () => {
  stopAtFirstFailure();
  it("snapshots it and rolls it back in place: every ConfigMap as it was, the later one gone, the token of before working at the same endpoint; an altered snapshot refused", async () => {
    const context = conformanceContext(state, { options: { kind: tools.kind, docker: tools.docker } });
    const kind = await createBackend(context);
    backend = kind;
    const observe = (what: string, wanted: (o: ClusterObservation) => boolean) =>
      eventually(async () => satisfying(await kind.observe(target), wanted), {
        what: `${kindClusterNameOf(target.name, target.uid)}: ${what}`,
        timeoutMs: 300_000,
        intervalMs: 1_000,
      }) as Promise<ClusterObservation>;
    await kind.create(target, tools.kubernetesVersion);
    const ready = await observe("ready", (o) => o.exists && o.phase === "ready");
    const admin = new KubeConfig();
    admin.loadFromString((await kind.adminAccess?.(target))?.kubeconfig ?? "");
    let started = Date.now();
    await writeConfigMaps(admin, OBJECTS);
    const core = admin.makeApiClient(CoreV1Api);
    console.log(`kind snapshot: wrote ${OBJECTS} ConfigMaps in ${Date.now() - started} ms`);
    original = admin;
    written = await contents(admin);
    expect(written.size).toBe(OBJECTS);
    await core.createNamespacedServiceAccount({ namespace: APP, body: { metadata: { name: "reader" } } });
    token =
      (
        await core.createNamespacedServiceAccountToken({
          namespace: APP,
          name: "reader",
          body: { spec: { audiences: [], expirationSeconds: 3600 } },
        })
      ).status?.token ?? "";
    expect(token).not.toBe("");

    started = Date.now();
    const manifest = await kind.snapshot?.(target, reference("before"));
    console.log(
      `kind snapshot: ${OBJECTS} ConfigMaps snapshotted in ${Date.now() - started} ms, ${manifest?.size} bytes`,
    );
    expect(manifest).toMatchObject({ backend: "kind", cluster: { uid: target.uid } });
    expect(manifest?.files.map((file) => file.name)).toEqual(
      expect.arrayContaining(["etcd.db", "ca.crt", "ca.key", "sa.key", "sa.pub", "etcd-ca.crt"]),
    );
    // Idempotent by name: the complete snapshot as it is.
    expect((await kind.snapshot?.(target, reference("before")))?.checksum).toBe(manifest?.checksum);

    // Changed after the snapshot: the ConfigMaps of then gone, one of later made.
    await core.deleteCollectionNamespacedConfigMap({ namespace: APP, labelSelector: "batch=before" });
    await core.createNamespacedConfigMap({ namespace: APP, body: { metadata: { name: "object-after" } } });
    await eventually(async () => expect((await contents(admin)).size).toBe(1), { timeoutMs: 120_000 });

    // An altered copy is refused, and nothing changes.
    cpSync(join(store, "before"), join(store, "altered"), { recursive: true });
    appendFileSync(join(store, "altered", "etcd.db"), "x");
    const refused = await kind.restore?.(target, reference("altered")).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSnapshotRejection(refused) && refused.reason).toBe("ChecksumMismatch");
    expect((await contents(admin)).has("object-after")).toBe(true);

    started = Date.now();
    await kind.restore?.(target, reference("before"));
    console.log(
      `kind restore: ${OBJECTS} ConfigMaps rolled back in ${Date.now() - started} ms (call → serving)`,
    );
    const back = await contents(admin);
    expect(back.has("object-after")).toBe(false);
    expect(back).toEqual(written);
    const server = admin.getCurrentCluster();
    const review = await withToken(server?.server ?? "", server?.caData ?? "", token)
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${APP}:reader`);
    const again = await observe("ready after the restore", (o) => o.exists && o.phase === "ready");
    expect(again.exists && again.endpoint).toBe(ready.exists && ready.endpoint);
  });

  it("makes a new Cluster from the snapshot (a clone): every ConfigMap of then, the token of before working, its own endpoint and node, nothing of it pointing at the original", async () => {
    const kind = backend as ClusterBackend;
    const cloned = { ...clone, restoreFrom: reference("before") };
    const started = Date.now();
    await kind.create(cloned, tools.kubernetesVersion);
    // As the engine does: a cluster that says what it still lacks is created again, which makes that.
    const ready = (await eventually(
      async () => {
        const observed = await kind.observe(cloned);
        if (observed.exists && observed.incomplete) await kind.create(cloned, tools.kubernetesVersion);
        return satisfying(observed, (o) => o.exists && o.phase === "ready" && !o.incomplete);
      },
      { what: "the clone ready", timeoutMs: 420_000, intervalMs: 2_000 },
    )) as ClusterObservation;
    console.log(
      `kind clone: a cluster of ${OBJECTS} ConfigMaps made from a snapshot in ${Date.now() - started} ms`,
    );
    const admin = new KubeConfig();
    admin.loadFromString((await kind.adminAccess?.(cloned))?.kubeconfig ?? "");
    const first = original?.getCurrentCluster();
    expect(ready.exists && ready.endpoint).not.toBe(first?.server);
    expect(await contents(admin)).toEqual(written);
    // Same certificate authority and service-account key: the original's token authenticates at the clone.
    const review = await withToken(ready.exists ? (ready.endpoint ?? "") : "", first?.caData ?? "", token)
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${APP}:reader`);
    // Its own node only, and kube-proxy's kubeconfig names it, not the original's.
    const core = admin.makeApiClient(CoreV1Api);
    const node = `${kindClusterNameOf(clone.name, clone.uid)}-control-plane`;
    const nodes = await eventually(
      async () => satisfying(await core.listNode(), (list) => list.items.length === 1),
      { what: "the clone's one node", timeoutMs: 120_000, intervalMs: 2_000 },
    );
    expect(nodes.items[0]?.metadata?.name).toBe(node);
    const proxy = await core.readNamespacedConfigMap({ namespace: "kube-system", name: "kube-proxy" });
    expect(JSON.stringify(proxy.data)).toContain(node);
    expect(JSON.stringify(proxy.data)).not.toContain(kindClusterNameOf(target.name, target.uid));
  });
  it("hibernates by stopping the node container and wakes the same one at the same endpoint; no snapshot of a sleeping cluster", async () => {
    let kind = backend as ClusterBackend;
    const name = kindClusterNameOf(target.name, target.uid);
    const node = `${name}-control-plane`;
    const containerStates = async () =>
      (
        await docker(
          "ps",
          "--all",
          "--filter",
          `label=io.x-k8s.kind.cluster=${name}`,
          "--format",
          "{{.Names}} {{.State}}",
        )
      )
        .split("\n")
        .filter(Boolean);
    const until = (what: string, wanted: (o: ClusterObservation) => boolean) =>
      eventually(async () => satisfying(await kind.observe(target), wanted), {
        what: `${name}: ${what}`,
        timeoutMs: 300_000,
        intervalMs: 1_000,
      }) as Promise<ClusterObservation>;
    const ready = await until("ready", (o) => o.exists && o.phase === "ready");
    const endpoint = ready.exists ? ready.endpoint : undefined;
    // kind picks the API server's host port at create time and publishes it fixed: Docker keeps it across a stop.
    const bindings = await docker("inspect", "--format", "{{json .HostConfig.PortBindings}}", node);
    expect(bindings).toMatch(new RegExp(`"HostPort":"${new URL(endpoint ?? "https://x:1").port}"`));
    expect(await containerStates()).toEqual([`${node} running`]);
    const kubeconfigBefore = (await kind.adminAccess?.(target))?.kubeconfig ?? "";
    expect(kubeconfigBefore).toContain(`server: ${endpoint}`);

    let started = performance.now();
    await kind.hibernate?.(target);
    await kind.hibernate?.(target); // idempotent
    await until("hibernated", (o) => o.exists && o.phase === "hibernated");
    console.log(`kind hibernate: ${Math.round(performance.now() - started)} ms`);
    expect(await containerStates()).toEqual([`${node} exited`]);
    expect(await kind.adminAccess?.(target)).toBeUndefined();
    await expect(kind.snapshot?.(target, reference("asleep"))).rejects.toThrow(
      /hibernated: a snapshot needs it ready and awake/,
    );

    await kind.close?.(); // an engine restart: the new instance reads the wish from the folder
    kind = await createBackend(
      conformanceContext(state, { options: { kind: tools.kind, docker: tools.docker } }),
    );
    backend = kind;
    await kind.create(target, tools.kubernetesVersion); // changes nothing
    expect(await kind.observe(target)).toMatchObject({ phase: "hibernated" });

    started = performance.now();
    await kind.wake?.(target);
    await kind.wake?.(target); // idempotent
    const woken = await until("ready again", (o) => o.exists && o.phase === "ready");
    console.log(`kind wake: ready after ${Math.round(performance.now() - started)} ms`);
    expect(woken).toMatchObject({ phase: "ready", endpoint });
    expect(await containerStates()).toEqual([`${node} running`]); // the same container, started again
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigBefore);
    const namespaces = await eventually(
      async () =>
        (await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name),
      { what: "namespaces with the kubeconfig from before the sleep", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect(namespaces).toContain("kube-system");
    // The clone goes to sleep too, and is deleted from there (afterAll).
    await kind.hibernate?.(clone);
    await eventually(
      async () => satisfying(await kind.observe(clone), (o) => o.exists && o.phase === "hibernated"),
      {
        what: "the clone hibernated",
        timeoutMs: 120_000,
        intervalMs: 1_000,
      },
    );
  });
});
