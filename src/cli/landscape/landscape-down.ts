/**
 * `openmcp-engine landscape down`: every cluster of the landscape removed, in the order that leaves nothing
 * behind: the purposes' clusters by the engine in the platform cluster (their requests and Clusters deleted), then
 * that engine stopped, then the platform cluster by this process through the same backend; a bootstrap left by an
 * `up` that stopped early goes with its Clusters; then the landscape's folder.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import type { ClusterBackend, SecretReader } from "../../api/backend-contract.ts";
import type { Cluster } from "../../api/cluster.ts";
import { clusterTarget } from "../../machines/cluster/step.ts";
import { createLogger } from "../../runtime/logger.ts";
import { backendFromSettings } from "../../runtime/start/engine-from-settings.ts";
import { pollUntil } from "../../util/poll-until.ts";
import { stopEngineProcess } from "./engine-process.ts";
import { LandscapeFolder, type LandscapeSettings } from "./landscape-folder.ts";
import { LandscapeApi } from "./landscape-objects.ts";
import {
  ENGINE_DEPLOYMENT,
  ENGINE_NAMESPACE,
  enginePlacement,
  LANDSCAPE_NAMESPACE,
  type Manifest,
  PLATFORM_CLUSTER,
} from "./landscape-plan.ts";

export async function landscapeDown(settings: LandscapeSettings): Promise<void> {
  const folder = await LandscapeFolder.open(settings);
  const say = settings.say;
  try {
    if (existsSync(folder.platformKubeconfig)) await removePlatformLandscape(folder);
    // Gone with its cluster, or never started: either way not left running.
    await stopEngineProcess(folder);
    if (await folder.bootstrapKubeConfigIfRunning()) await removeBootstrapClusters(folder);
    await folder.removeBootstrap();
  } finally {
    await folder.close();
  }
  await folder.remove();
  say(`Landscape ${settings.landscape.name} is gone: its clusters and ${settings.directory}.`);
}

/** The landscape's Clusters made through a provider of this landscape (not another provider's). */
const ofLandscape = (folder: LandscapeFolder) => (cluster: Cluster) =>
  cluster.spec.profile.startsWith(`${folder.landscape.environment}.${folder.landscape.providerName}.`);

async function removePlatformLandscape(folder: LandscapeFolder): Promise<void> {
  const say = folder.settings.say;
  const api = new LandscapeApi(await folder.platformKubeConfig());
  // A platform that does not answer is not taken for gone: its clusters and this folder (the way to reach them) stay.
  const platform = await api.cluster(PLATFORM_CLUSTER, LANDSCAPE_NAMESPACE).catch((error: Error) => {
    throw new Error(
      `the platform cluster does not answer (${error.message}); nothing was removed. Start it again (${folder.platformKubeconfig} names it), then run down again`,
    );
  });
  // Its Cluster already gone (a down that stopped after deleting the platform at the backend): nothing left there.
  if (!platform) return;
  say("▸ the purposes' clusters, deleted by the engine in the platform cluster");
  for (const purpose of folder.landscape.purposes)
    await api.deleteClusterRequest(purpose.name, LANDSCAPE_NAMESPACE);
  const others = async () =>
    (await api.clusters()).filter(
      (cluster) => ofLandscape(folder)(cluster) && cluster.metadata.uid !== platform.metadata.uid,
    );
  // Those kept without requests (onboarding, workload) are deleted by name.
  for (const cluster of await others())
    await api.deleteCluster(cluster.metadata.name ?? "", cluster.metadata.namespace ?? "");
  await pollUntil(
    "the purposes' Clusters gone",
    async () => {
      const left = await others();
      return left.length === 0
        ? { done: true, value: undefined }
        : {
            done: false,
            why: `left: ${left.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).join(", ")}`,
          };
    },
    { timeoutMs: folder.settings.timeoutMs, onWhy: (why) => say(`  ${why}`) },
  );
  if (enginePlacement(folder.landscape) === "process") {
    say("▸ the engine process stopped");
    await stopEngineProcess(folder);
  } else {
    say("▸ the engine in the platform cluster stopped");
    await api.scale(ENGINE_DEPLOYMENT, ENGINE_NAMESPACE, 0);
    await pollUntil(
      "the engine's Pods gone",
      async () => {
        const running = await api.scale(ENGINE_DEPLOYMENT, ENGINE_NAMESPACE, 0);
        return running === 0 ? { done: true, value: undefined } : { done: false, why: `${running} running` };
      },
      { timeoutMs: folder.settings.timeoutMs },
    );
  }
  say("▸ the platform cluster, deleted by this process");
  await deleteAtBackend(folder, platform, await api.profile(platform.spec.profile));
  // Gone: a down run again must not wait for it to answer.
  await rm(folder.platformKubeconfig, { force: true });
}

/** Deletes a cluster at the landscape's backend directly, and waits until the backend no longer holds it. */
async function deleteAtBackend(
  folder: LandscapeFolder,
  cluster: Cluster,
  profile: Parameters<typeof clusterTarget>[1],
): Promise<void> {
  const log = createLogger({ level: "warn" });
  const backend = (await backendFromSettings(
    {
      backend: folder.landscape.backend,
      backendOptions: await folder.kindTools(),
      stateDirectory: folder.stateFolder,
    },
    await folder.platformKubeConfig(),
    log,
    // From the landscape file, not the platform cluster: the platform may be the cluster being deleted.
    localSecretReader(await folder.secrets()),
  )) as ClusterBackend;
  const target = clusterTarget(cluster, profile);
  await backend.delete(target);
  await pollUntil(
    `the ${folder.landscape.backend} cluster of Cluster ${LANDSCAPE_NAMESPACE}/${cluster.metadata.name} deleted`,
    async () =>
      (await backend.observe(target)).exists
        ? { done: false, why: "still there" }
        : { done: true, value: undefined },
    { timeoutMs: folder.settings.timeoutMs, intervalMs: 2_000 },
  );
}

/** An `up` stopped before the move: the bootstrap's engine deletes its Clusters (the protected platform too). */
async function removeBootstrapClusters(folder: LandscapeFolder): Promise<void> {
  folder.settings.say("▸ the bootstrap's Clusters, deleted by its engine");
  const bootstrap = await folder.bootstrap();
  const api = new LandscapeApi(bootstrap.kubeConfig);
  for (const cluster of (await api.clusters()).filter(ofLandscape(folder))) {
    await api.confirmDeletion(cluster.metadata.name ?? "", cluster.metadata.namespace ?? "");
    await api.deleteCluster(cluster.metadata.name ?? "", cluster.metadata.namespace ?? "");
  }
  await pollUntil(
    "the bootstrap's Clusters gone",
    async () => {
      const left = (await api.clusters()).filter(ofLandscape(folder));
      return left.length === 0
        ? { done: true, value: undefined }
        : { done: false, why: `left: ${left.map((c) => c.metadata.name).join(", ")}` };
    },
    { timeoutMs: folder.settings.timeoutMs, onWhy: (why) => folder.settings.say(`  ${why}`) },
  );
}

/** Reads the landscape's own Secrets (their `stringData`), as the backend asks for a key of one. */
function localSecretReader(secrets: readonly Manifest[]): SecretReader {
  return async (namespace, name, key) => {
    const secret = secrets.find((s) => s.metadata.namespace === namespace && s.metadata.name === name) as
      | (Manifest & { stringData?: Record<string, string> })
      | undefined;
    return secret?.stringData?.[key];
  };
}
