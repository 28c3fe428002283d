import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { CONDITION_TYPES, RESOURCES } from "../../src/api/constants.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import { inspectPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { eventually } from "../support/eventually.ts";
import { localBackends } from "../support/local-backend-state.ts";
import { killHard } from "../support/processes.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

const version = kubeAssetVersions(findKubeAssets()).kubernetes.replace(/^v/, "");
const locals = localBackends("ready-stays-true-");
const state = locals.folder();
/** A resync this short keeps the test short; the default (2 min) is the same mechanism. */
const TIMING = { pollMs: 200, retryMs: 1_000, resyncMs: 1_500 };

/** The local backend the engine calls now; a new instance replaces it as after a restart of the backend. */
let local: ClusterBackend;
/** While set, every look at the backend fails with it (as when the backend's credentials are gone). */
let lookFails: string | undefined;
const openLocal = () => locals.open(state);
const backend: ClusterBackend = {
  name: "local",
  capabilities: { adminAccess: false, oidc: false },
  supportedVersions: (config) => local.supportedVersions(config),
  traits: (config) => local.traits(config),
  observe: async (target) => {
    if (lookFails !== undefined) throw new Error(lookFails);
    return local.observe(target);
  },
  create: (target, wanted) => local.create(target, wanted),
  update: (target, wanted) => local.update(target, wanted),
  delete: (target) => local.delete(target),
  adminAccess: async () => undefined,
};

let world: World;
const readyCondition = (cluster: Cluster | undefined) =>
  cluster?.status?.conditions?.find((condition) => condition.type === CONDITION_TYPES.clusterReady);
const eventsOf = async (name: string, reason: string) =>
  (
    await world.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: world.namespace, fieldSelector: `involvedObject.name=${name}` })
  ).items.filter((event) => event.reason === reason);

beforeAll(async () => {
  local = await openLocal();
  world = await startWorld({ backend, timing: TIMING });
  // The harness's profile, offering what this backend runs.
  const profile = await world.custom.getClusterCustomObject({
    ...RESOURCES.ClusterProfile,
    name: world.profile,
  });
  await world.custom.replaceClusterCustomObject({
    ...RESOURCES.ClusterProfile,
    name: world.profile,
    body: { ...profile, spec: { ...(profile as { spec: object }).spec, supportedVersions: [{ version }] } },
  });
}, 120_000);

afterAll(() => locals.close(world), 120_000);

describe("a Ready Cluster whose infrastructure goes away", { timeout: 180_000 }, () => {
  let ready: Cluster;

  /** The Ready condition of Cluster lost once it turns False, the Cluster still Progressing and nothing ordered. */
  async function readyTurnsFalse() {
    const lost = await world.waitFor(
      "lost",
      (cluster) => readyCondition(cluster)?.status === "False",
      30_000,
    );
    expect(lost?.status?.phase).toBe("Progressing");
    expect(lost?.status?.providerStatus?.state).toBe("ready"); // nothing is ordered: it may come back
    return readyCondition(lost);
  }

  beforeAll(async () => {
    await world.createCluster("lost", { kubernetes: { version } });
    ready = (await world.waitFor("lost", isReady, 90_000)) as Cluster;
  }, 120_000);

  it("says so when its processes are killed, and is Ready again on the same endpoint once they run again", async () => {
    const folder = join(state, "clusters", ready.metadata.uid ?? "");
    const { record } = await inspectPersistentControlPlane(folder);
    if (!record) throw new Error(`no record in ${folder}`);
    // Nothing restarts them behind the test's back: this instance's supervisor stops with it.
    await local.close?.();
    await killHard([record.pids.etcd, record.pids.apiServer ?? -1].filter((pid) => pid > 0));

    expect(await readyTurnsFalse()).toMatchObject({
      reason: "BackendNotReady",
      message:
        "the backend reports the cluster provisioning: its processes are not running; the supervisor starts them again from their data",
    });
    await eventually(async () => expect(await eventsOf("lost", "BackendNotReady")).toHaveLength(1), {
      what: "a BackendNotReady Event on Cluster lost",
    });

    local = await openLocal(); // its supervisor starts the processes again from their data
    const back = await world.waitFor("lost", isReady, 90_000);
    expect(readyCondition(back)).toMatchObject({ status: "True", reason: "Ready" });
    expect(back?.status?.endpoints).toEqual(ready.status?.endpoints);
    expect(world.callsAbout("create", `${world.namespace}/lost`)).toBe(1);
  });

  it("says so when the backend cannot be asked about it, orders nothing, and is Ready again once it answers", async () => {
    const creates = world.callsAbout("create", `${world.namespace}/lost`);
    lookFails = "Secret clusters/host-kubeconfig not found";
    try {
      expect(await readyTurnsFalse()).toMatchObject({
        reason: "ObserveFailed",
        message:
          "the backend could not be asked about the cluster: Secret clusters/host-kubeconfig not found",
      });
      expect((await eventsOf("lost", "ObserveFailed")).map((event) => event.message)).toEqual([
        "looking at it failed: Secret clusters/host-kubeconfig not found",
      ]);
    } finally {
      lookFails = undefined;
    }
    const back = await world.waitFor("lost", isReady, 60_000);
    expect(readyCondition(back)).toMatchObject({ status: "True", reason: "Ready" });
    expect(world.callsAbout("create", `${world.namespace}/lost`)).toBe(creates);
  });
});
