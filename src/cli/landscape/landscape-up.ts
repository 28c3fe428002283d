/**
 * `openmcp-engine landscape up`: from nothing to a landscape the engine manages itself. A bootstrap control plane
 * on this machine runs the engine, which makes the platform cluster on the landscape's backend; the CRDs and the
 * engine go into the platform cluster, the landscape's objects move there (as `openmcp-engine move`), the
 * bootstrap goes; then the engine in the platform cluster makes the other purposes' clusters for ClusterRequests.
 * Each step is recorded when done; a failed step says what it left where, and running the command again resumes.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadAllYaml } from "@kubernetes/client-node";
import { parse } from "yaml";
import type { Cluster } from "../../api/cluster.ts";
import { CLUSTER_LABELS } from "../../api/constants/cluster.ts";
import { clusterTarget } from "../../machines/cluster/step.ts";
import { kindNameOf, loadImageIntoKindCluster } from "../../providers/public.ts";
import { installCrds } from "../../runtime/api-server/install-crds.ts";
import { moveObjects } from "../../runtime/move/move-objects.ts";
import { pollUntil } from "../../util/poll-until.ts";
import { checkoutFile } from "../from-checkout.ts";
import { ensureEngineProcess } from "./engine-process.ts";
import { LandscapeFolder, type LandscapeSettings } from "./landscape-folder.ts";
import { clusterProgress, LandscapeApi } from "./landscape-objects.ts";
import {
  bootstrapObjects,
  clusterRequests,
  ENGINE_DEPLOYMENT,
  ENGINE_NAMESPACE,
  engineManifests,
  enginePlacement,
  LANDSCAPE_NAMESPACE,
  landscapeNamespaces,
  type Manifest,
  PLATFORM_CLUSTER,
  platformCluster,
  providerConfigObject,
} from "./landscape-plan.ts";

/** The steps of `landscape up`, in order. */
export const LANDSCAPE_STEPS = [
  "bootstrap",
  "platform",
  "engine",
  "move",
  "bootstrap-removed",
  "purposes",
] as const;
export type LandscapeStep = (typeof LANDSCAPE_STEPS)[number];

const TITLES: Record<LandscapeStep, string> = {
  bootstrap: "bootstrap: a control plane on this machine with the CRDs and the engine",
  platform: "the platform cluster, made by the bootstrap's engine",
  engine: "the CRDs and the engine in the platform cluster",
  move: "the landscape's objects moved from the bootstrap into the platform cluster",
  "bootstrap-removed": "the bootstrap stopped and removed",
  purposes: "the purposes' clusters, requested from the engine in the platform cluster",
};

/** What a step that failed leaves, and where. */
function leftBy(step: LandscapeStep, folder: LandscapeFolder): string {
  const platform = `the platform cluster (kubeconfig ${folder.platformKubeconfig})`;
  const bootstrap = `the bootstrap control plane (kubeconfig ${folder.bootstrapKubeconfig}, still running)`;
  switch (step) {
    case "bootstrap":
      return `${folder.bootstrapFolder}, perhaps with its control plane running`;
    case "platform":
      return `${bootstrap} with the platform Cluster in ${LANDSCAPE_NAMESPACE}; its cluster perhaps half made`;
    case "engine":
      return `${bootstrap}, which manages ${platform}; the engine perhaps partly installed there`;
    case "move":
      return `objects partly moved between ${bootstrap} and ${platform}: each is on one side, paused or not (the move converges when run again)`;
    case "bootstrap-removed":
      return `the landscape in ${platform}; the bootstrap's processes perhaps still running from ${folder.bootstrapFolder}`;
    case "purposes":
      return `${platform}, run by the engine there; its ClusterRequests in ${LANDSCAPE_NAMESPACE} say what they wait for`;
  }
}

/** A step failed: which, why, what it left and how to go on. */
export class LandscapeStepError extends Error {
  constructor(step: LandscapeStep, cause: unknown, left: string, resume: string) {
    super(
      `step "${step}" (${TITLES[step]}) failed: ${(cause as Error)?.message ?? String(cause)}\n  left: ${left}\n  resume: ${resume} (it goes on at this step)`,
    );
    this.name = "LandscapeStepError";
  }
}

/** Runs the steps not done yet; resolves once every purpose's cluster is Ready. */
export async function landscapeUp(settings: LandscapeSettings): Promise<void> {
  const folder = await LandscapeFolder.open(settings);
  const say = settings.say;
  const started = performance.now();
  const done = await folder.doneSteps();
  if (done.length > 0) say(`resuming: ${done.join(", ")} done before`);
  // An engine process stopped since (a reboot, a kill) runs again before the next step needs it.
  if (done.includes("engine") && enginePlacement(settings.landscape) === "process")
    await ensureEngineProcess(folder);
  try {
    for (const step of LANDSCAPE_STEPS) {
      if (done.includes(step)) continue;
      const stepStarted = performance.now();
      say(`▸ ${TITLES[step]}`);
      try {
        await STEPS[step](folder);
      } catch (error) {
        throw new LandscapeStepError(step, error, leftBy(step, folder), settings.resumeCommand);
      }
      await folder.markDone(step);
      say(`✓ ${step} (${seconds(performance.now() - stepStarted)})`);
    }
    await showLandscape(folder, performance.now() - started);
  } finally {
    await folder.close();
  }
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

const STEPS: Record<LandscapeStep, (folder: LandscapeFolder) => Promise<void>> = {
  bootstrap: async (folder) => {
    await folder.bootstrap();
  },
  platform: makePlatform,
  engine: installEngine,
  move: async (folder) => {
    const bootstrap = await folder.bootstrap();
    const report = await moveObjects({
      from: bootstrap.kubeConfig,
      to: await folder.platformKubeConfig(),
      namespaces: [LANDSCAPE_NAMESPACE],
      timeoutMs: folder.settings.timeoutMs,
      log: (line) => folder.settings.say(`  ${line}`),
    });
    if (report.refused.length > 0)
      throw new Error(
        `left on the bootstrap: ${report.refused.map(({ cluster, reason }) => `Cluster ${cluster}: ${reason}`).join("; ")}`,
      );
  },
  "bootstrap-removed": async (folder) => {
    await folder.removeBootstrap();
    // The bootstrap's engine (this user) wrote the platform cluster's files; the engine's Pod writes them now.
    await folder.handStateFolderToPod();
  },
  purposes: requestPurposes,
};

async function makePlatform(folder: LandscapeFolder): Promise<void> {
  const bootstrap = await folder.bootstrap();
  const api = new LandscapeApi(bootstrap.kubeConfig);
  const objects = bootstrapObjects(
    folder.landscape,
    enginePlacement(folder.landscape) === "pod" ? await folder.host() : undefined,
    await folder.secrets(),
  );
  // The configs first, and the platform's profile offered, so that its Cluster finds it at once.
  await api.createMissing(objects.filter((object) => object.kind !== "Cluster"));
  const profile = platformCluster(folder.landscape).spec.profile;
  await pollUntil(
    `ClusterProfile ${profile} offered by the bootstrap's engine`,
    async () =>
      (await api.profile(profile)) ? { done: true, value: true } : { done: false, why: "not yet" },
    { timeoutMs: folder.settings.timeoutMs, intervalMs: 250 },
  );
  await api.createMissing(objects.filter((object) => object.kind === "Cluster"));
  const cluster = await clusterReady(folder, api, PLATFORM_CLUSTER, LANDSCAPE_NAMESPACE);
  const access = await bootstrap.engine.backend.adminAccess(
    clusterTarget(cluster, await api.profile(cluster.spec.profile)),
  );
  if (!access)
    throw new Error(`the ${folder.landscape.backend} backend gives no admin access to its clusters`);
  await writeFile(folder.platformKubeconfig, access.kubeconfig, { mode: 0o600 });
  folder.settings.say(`  platform cluster Ready; admin kubeconfig ${folder.platformKubeconfig}`);
}

async function installEngine(folder: LandscapeFolder): Promise<void> {
  const kubeConfig = await folder.platformKubeConfig();
  const crds = await installCrds(kubeConfig, { directory: folder.settings.crds });
  folder.settings.say(`  ${crds.length} CRDs served in the platform cluster`);
  const api = new LandscapeApi(kubeConfig);
  await api.createMissing([...landscapeNamespaces(folder.landscape), ...(await folder.secrets())]);
  if (enginePlacement(folder.landscape) === "pod") await installEnginePod(folder, api);
  // The config of every other purpose's cluster (the move takes only the platform's, which its Cluster uses),
  // there before the engine starts so that its profile is ready when the requests come.
  await api.createMissing([providerConfigObject(folder.landscape)]);
  if (enginePlacement(folder.landscape) === "process") {
    folder.settings.say(
      `  the ${folder.landscape.backend} backend's clusters have no nodes for the engine's Pod: it runs as a process of this machine against the platform cluster`,
    );
    await ensureEngineProcess(folder);
  }
}

/** The engine's image and deploy/base in the platform cluster, with the host's socket and state folder. */
async function installEnginePod(folder: LandscapeFolder, api: LandscapeApi): Promise<void> {
  const host = await folder.host();
  const bootstrap = await folder.bootstrap();
  const platform = await new LandscapeApi(bootstrap.kubeConfig).cluster(
    PLATFORM_CLUSTER,
    LANDSCAPE_NAMESPACE,
  );
  if (!platform) throw new Error(`the bootstrap has no Cluster ${LANDSCAPE_NAMESPACE}/${PLATFORM_CLUSTER}`);
  const kindCluster = kindNameOf(clusterTarget(platform, undefined));
  folder.settings.say(`  loading ${host.image} into kind cluster ${kindCluster}`);
  const { kind = "kind", docker } = await folder.kindTools();
  await loadImageIntoKindCluster({ kind, ...(docker ? { docker } : {}) }, kindCluster, host.image);
  await folder.handStateFolderToPod();
  await api.apply(engineManifests(folder.landscape, host, await deployBase()));
  await pollUntil(
    `the engine's Deployment ${ENGINE_NAMESPACE}/${ENGINE_DEPLOYMENT} in the platform cluster`,
    async () => {
      const ready = await api.readyReplicas(ENGINE_DEPLOYMENT, ENGINE_NAMESPACE);
      return ready ? { done: true, value: ready } : { done: false, why: `${ready ?? "no"} replica ready` };
    },
    { timeoutMs: folder.settings.timeoutMs, onWhy: (why) => folder.settings.say(`  engine: ${why}`) },
  );
}

/** deploy/base's objects, from the files its kustomization lists (the CRDs are installed on their own). */
async function deployBase(): Promise<Manifest[]> {
  const directory = checkoutFile(
    "deploy/base",
    "installing the engine in the platform cluster (landscape up)",
  );
  const kustomization = parse(await readFile(join(directory, "kustomization.yaml"), "utf8")) as {
    resources?: string[];
  };
  const files = (kustomization.resources ?? []).filter((entry) => /\.ya?ml$/.test(entry));
  const objects: Manifest[] = [];
  for (const file of files)
    objects.push(...(loadAllYaml(await readFile(join(directory, file), "utf8")) as Manifest[]));
  return objects.filter(Boolean);
}

async function requestPurposes(folder: LandscapeFolder): Promise<void> {
  const api = new LandscapeApi(await folder.platformKubeConfig());
  const requests = clusterRequests(folder.landscape);
  // Those with a cluster of their own first, so that those sharing one find it.
  for (const own of [true, false]) {
    const batch = requests.filter(
      (request) =>
        own ===
        (folder.landscape.purposes.find((p) => p.name === request.spec.purpose)?.sharesClusterOf ===
          undefined),
    );
    await api.createMissing(batch);
    for (const request of batch) {
      const name = request.metadata.name ?? "";
      const granted = await pollUntil(
        `ClusterRequest ${LANDSCAPE_NAMESPACE}/${name} granted`,
        async () => {
          const current = await api.clusterRequest(name, LANDSCAPE_NAMESPACE);
          const cluster = current?.status?.cluster;
          return current?.status?.phase === "Granted" && cluster
            ? { done: true, value: cluster }
            : { done: false, why: current?.status?.phase ?? "no phase yet" };
        },
        { timeoutMs: folder.settings.timeoutMs },
      );
      await clusterReady(folder, api, granted.name, granted.namespace ?? LANDSCAPE_NAMESPACE, name);
    }
  }
}

/** Waits for a Cluster to be Ready, saying what it waits for whenever that changes. */
function clusterReady(
  folder: LandscapeFolder,
  api: LandscapeApi,
  name: string,
  namespace: string,
  purpose = name,
): Promise<Cluster> {
  return pollUntil(
    `Cluster ${namespace}/${name} Ready`,
    async () => {
      const cluster = await api.cluster(name, namespace);
      return cluster?.status?.phase === "Ready"
        ? { done: true, value: cluster }
        : { done: false, why: clusterProgress(cluster) };
    },
    {
      timeoutMs: folder.settings.timeoutMs,
      onWhy: (why) => folder.settings.say(`  ${purpose}: ${why.slice(0, 300)}`),
    },
  );
}

async function showLandscape(folder: LandscapeFolder, elapsedMs: number): Promise<void> {
  const api = new LandscapeApi(await folder.platformKubeConfig());
  const lines: string[] = [];
  for (const purpose of folder.landscape.purposes) {
    const request = await api.clusterRequest(purpose.name, LANDSCAPE_NAMESPACE);
    const ref = request?.status?.cluster;
    const cluster = ref ? await api.cluster(ref.name, ref.namespace ?? LANDSCAPE_NAMESPACE) : undefined;
    lines.push(
      `  ${purpose.name.padEnd(12)} Cluster ${ref ? `${ref.namespace}/${ref.name}` : "-"}  ${cluster?.status?.phase ?? "?"}  ${cluster?.metadata.annotations?.["clusters.openmcp.cloud/providerinfo"] ?? ""}`,
    );
  }
  const kubectl = `kubectl --kubeconfig ${folder.platformKubeconfig}`;
  const where =
    enginePlacement(folder.landscape) === "pod"
      ? `in the platform cluster (namespace ${ENGINE_NAMESPACE})`
      : `as a process of this machine against the platform cluster (pid file and log in ${folder.settings.directory})`;
  folder.settings.say(`
Landscape ${folder.landscape.name} is up (${seconds(elapsedMs)}): the engine runs ${where} and manages every
cluster of it, its own included (labelled ${CLUSTER_LABELS.deletionProtection}: deleting it needs an explicit step).
${lines.join("\n")}
  the platform's admin kubeconfig: ${folder.platformKubeconfig}
  try:        ${kubectl} get clusters,clusterrequests -A
  a purpose's cluster: an AccessRequest in ${LANDSCAPE_NAMESPACE} naming its ClusterRequest (README: Landscape)
  tear down:  ${folder.settings.downCommand}`);
}
